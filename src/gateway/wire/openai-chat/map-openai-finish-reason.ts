// Keeps OpenAI finish reasons as they are; anything else a relay invents becomes 'stop' (the raw value
// is reported beside it), so the canonical type stays a closed set.
import type { FinishReason } from '../../protocol/chat-types.ts';

const KNOWN = new Set<string>(['stop', 'length', 'tool_calls', 'content_filter', 'function_call']);

export function mapOpenAIFinishReason(value: unknown): FinishReason | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' && KNOWN.has(value) ? (value as FinishReason) : 'stop';
}
