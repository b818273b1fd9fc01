// Flattens text-only content (system, developer, tool messages) to one string.
import type { TextPart } from '../protocol/chat-types.ts';

export function contentText(content: string | TextPart[]): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('\n');
}
