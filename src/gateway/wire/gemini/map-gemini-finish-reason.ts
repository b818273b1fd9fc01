// Gemini Candidate.finishReason -> OpenAI finish_reason; the raw value is reported beside it.
import type { FinishReason } from '../../protocol/chat-types.ts';

const CONTENT_FILTER = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

/** The model produced an unusable function call: an upstream failure, not an answer. */
export const MALFORMED_FINISH_REASONS = new Set(['MALFORMED_FUNCTION_CALL', 'UNEXPECTED_TOOL_CALL']);

/**
 * Gemini says STOP even when the turn ends in function calls, so that becomes tool_calls. Blocking
 * reasons become content_filter; reasons with no OpenAI equivalent (LANGUAGE, OTHER, ...) 'stop'.
 */
export function mapGeminiFinishReason(reason: string, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (CONTENT_FILTER.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}
