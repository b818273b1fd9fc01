// Anthropic and Gemini take the system prompt as a separate field: leading system/developer messages
// become that field; a system message later in the conversation is refused, not silently moved.
import { HerdError } from '../../core/errors.ts';
import type { ChatMessage } from '../chat-types.ts';
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

export function splitSystemMessages(messages: ChatMessage[], upstream: string): SplitMessages {
  const system: string[] = [];
  const conversation: IndexedMessage[] = [];
  messages.forEach((message, index) => {
    if (isSystem(message)) {
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
