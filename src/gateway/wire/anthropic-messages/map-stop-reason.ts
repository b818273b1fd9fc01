// The stop_reason an Anthropic client reads: the upstream's own when it was an Anthropic upstream
// (stop_sequence, pause_turn and refusal survive), else the canonical finish_reason translated.
import type { FinishReason } from '../../protocol/chat-types.ts';
import type { MessagesStopReason } from './messages-types.ts';

const ANTHROPIC_STOP_REASONS: ReadonlySet<string> = new Set<MessagesStopReason>([
  'end_turn',
  'max_tokens',
  'stop_sequence',
  'tool_use',
  'pause_turn',
  'refusal',
  'model_context_window_exceeded',
]);

export function mapStopReason(finishReason: FinishReason | null, rawFinishReason: string | null | undefined): MessagesStopReason | null {
  if (rawFinishReason != null && ANTHROPIC_STOP_REASONS.has(rawFinishReason)) return rawFinishReason as MessagesStopReason;
  switch (finishReason) {
    case null:
      return null;
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}
