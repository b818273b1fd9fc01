// A request's prompt size, computed at most once and only when a decision needs it: tokenizing a
// long prompt costs far more CPU than relaying it, so a cheap byte bound answers first where it can.
import type { ChatRequest } from '../protocol/chat-types.ts';
import { countTokens, estimatePromptTokens, toolCallText } from '../protocol/usage-estimate.ts';

// Framing that estimatePromptTokens adds per message and per reply (see usage-estimate.ts), rounded up.
const FRAMING_PER_MESSAGE = 4;
const FRAMING_PER_REQUEST = 3;

export class PromptTokenEstimate {
  /** A chat request (its messages, framing and tools), or plain texts with no framing (embeddings' inputs). */
  private readonly source: ChatRequest | readonly string[];
  private bound: number | undefined;
  private exactCount: Promise<number> | undefined;
  private exactValue: number | undefined;

  constructor(source: ChatRequest | readonly string[]) {
    this.source = source;
  }

  /**
   * An upper bound without tokenizing: o200k is a byte-level BPE, so a text never has more tokens
   * than UTF-8 bytes. (There is no useful lower bound the same way.)
   */
  upperBound(): number {
    this.bound ??= isTexts(this.source) ? sumBytes(this.source) : computeUpperBound(this.source);
    return this.bound;
  }

  /** The tokenizer's count (gpt-tokenizer, o200k_base), as usage estimates use. */
  exact(): Promise<number> {
    this.exactCount ??= (isTexts(this.source) ? countTexts(this.source) : estimatePromptTokens(this.source)).then((count) => {
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

function isTexts(source: ChatRequest | readonly string[]): source is readonly string[] {
  return Array.isArray(source);
}

function sumBytes(texts: readonly string[]): number {
  let total = 0;
  for (const text of texts) total += Buffer.byteLength(text, 'utf8');
  return total;
}

async function countTexts(texts: readonly string[]): Promise<number> {
  let total = 0;
  for (const text of texts) total += await countTokens(text);
  return total;
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
