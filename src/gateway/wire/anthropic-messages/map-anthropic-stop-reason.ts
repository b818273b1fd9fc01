// Anthropic stop_reason -> OpenAI finish_reason; the raw value is reported beside it.
import type { FinishReason } from '../../protocol/chat-types.ts';

/**
 * Values per the Messages API reference ("Stop reasons and fallback"): end_turn, max_tokens,
 * stop_sequence, tool_use, pause_turn, refusal, model_context_window_exceeded. Unknown -> 'stop'.
 */
export function mapAnthropicStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default: // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}
