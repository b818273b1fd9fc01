// Anthropic and Gemini take the system prompt as a separate field: leading system/developer messages
// become that field. A system message later in the conversation is refused, not silently moved, unless
// the caller asks for it as a user turn in place (Gemini, whose contents have no system role).
import { HerdError } from '../../core/errors.ts';
import type { ChatMessage } from '../protocol/chat-types.ts';
import { contentText } from './content-text.ts';

export interface IndexedMessage {
  message: Exclude<ChatMessage, { role: 'system' | 'developer' }>;
  /** Position in the original request, for error params. */
  index: number;
}

export interface SplitMessages {
  /** Text of each leading system/developer message, in order. */
  system: string[];
  conversation: IndexedMessage[];
}

export interface SplitOptions {
  /** refuse (the default): a later system message is a 400 naming it; user: it becomes a user turn where it stands. */
  later?: 'refuse' | 'user';
}

export function splitSystemMessages(messages: ChatMessage[], upstream: string, options: SplitOptions = {}): SplitMessages {
  const system: string[] = [];
  const conversation: IndexedMessage[] = [];
  messages.forEach((message, index) => {
    if (isSystem(message)) {
      if (conversation.length > 0 && options.later === 'user') {
        // In place keeps the instruction where the client put it and the prompt's prefix stable for caching.
        conversation.push({ message: { role: 'user', content: contentText(message.content) }, index });
        return;
      }
      if (conversation.length > 0) {
        throw new HerdError('UNSUPPORTED', `${upstream} accepts system instructions only before the conversation; messages[${index}] is a ${message.role} message after it`, {
          param: `messages[${index}].role`,
        });
      }
      system.push(contentText(message.content));
    } else {
      conversation.push({ message, index });
    }
  });
  return { system, conversation };
}

function isSystem(message: ChatMessage): message is Extract<ChatMessage, { role: 'system' | 'developer' }> {
  return message.role === 'system' || message.role === 'developer';
}
