// A request's prompt size, computed at most once and only when a decision needs it: tokenizing a
// long prompt costs far more CPU than relaying it, so a cheap byte bound answers first where it can.
import type { ChatRequest } from '../protocol/chat-types.ts';
import { estimatePromptTokens, toolCallText } from '../protocol/usage-estimate.ts';

// Framing that estimatePromptTokens adds per message and per reply (see usage-estimate.ts), rounded up.
const FRAMING_PER_MESSAGE = 4;
const FRAMING_PER_REQUEST = 3;

export class PromptTokenEstimate {
  private readonly request: ChatRequest;
  private bound: number | undefined;
  private exactCount: Promise<number> | undefined;
  private exactValue: number | undefined;

  constructor(request: ChatRequest) {
    this.request = request;
  }

  /**
   * An upper bound without tokenizing: o200k is a byte-level BPE, so a text never has more tokens
   * than UTF-8 bytes. (There is no useful lower bound the same way.)
   */
  upperBound(): number {
    this.bound ??= computeUpperBound(this.request);
    return this.bound;
  }

  /** The tokenizer's count (gpt-tokenizer, o200k_base), as usage estimates use. */
  exact(): Promise<number> {
    this.exactCount ??= estimatePromptTokens(this.request).then((count) => {
      this.exactValue = count;
      return count;
    });
    return this.exactCount;
  }

  /** The exact count if something already needed it. */
  known(): number | undefined {
    return this.exactValue;
  }
}

function computeUpperBound(request: ChatRequest): number {
  let total = FRAMING_PER_REQUEST;
  const add = (text: string) => {
    // +1 for the separator estimatePromptTokens joins parts with.
    total += Buffer.byteLength(text, 'utf8') + 1;
  };
  for (const message of request.messages) {
    total += FRAMING_PER_MESSAGE;
    if ('name' in message && message.name !== undefined) add(message.name);
    const content = message.content;
    if (typeof content === 'string') add(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        if (part.type === 'text') add(part.text);
        else if (part.type === 'refusal') add(part.refusal);
      }
    }
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) for (const text of toolCallText(call)) add(text);
    }
  }
  if (request.tools !== undefined && request.tools.length > 0) add(JSON.stringify(request.tools));
  return total;
}
