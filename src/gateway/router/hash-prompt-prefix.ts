// A session identity for requests that name none: a digest of the opening every later turn of the
// conversation repeats — tools, the leading system messages and the first user message — up to a bound.
import { createHash, type Hash } from 'node:crypto';
import type { ChatMessage, ChatRequest } from '../protocol/chat-types.ts';

/**
 * SHA-256 (hex) of the request's opening, read in the order upstream prompt caches read a prompt (tools,
 * then messages) and stopping after the first user message: later messages change from turn to turn, so
 * including them would give every turn a new identity. At most `maxChars` characters of the tools and
 * leading system messages, and as many again from the first message after them: an application whose
 * long system prompt is the same for every conversation still tells its conversations apart (and spreads
 * them), where one bound over both would give them all one identity, hence one deployment. Undefined when
 * the opening is empty or maxChars is 0. Reads only what it hashes: a long conversation costs no more.
 */
export function hashPromptPrefix(request: ChatRequest, maxChars: number): string | undefined {
  if (maxChars <= 0) return undefined;
  const feed = new BoundedFeed(maxChars);
  for (const tool of request.tools ?? []) {
    if (feed.full) break;
    // One tool at a time: a large tool list stops being serialised once the bound is reached.
    feed.add(JSON.stringify(tool));
  }
  let shared = true;
  for (const message of request.messages) {
    if (shared && message.role !== 'system' && message.role !== 'developer') {
      shared = false;
      feed.refill(maxChars);
    }
    if (feed.full) break;
    feed.add(message.role);
    addContent(feed, message);
    if (message.role === 'user') break;
  }
  return feed.digest();
}

function addContent(feed: BoundedFeed, message: ChatMessage): void {
  const { content } = message;
  if (typeof content === 'string') {
    feed.add(content);
    return;
  }
  for (const part of content ?? []) {
    if (feed.full) return;
    if (part.type === 'text') feed.add(part.text);
    else if (part.type === 'image_url') feed.add(part.image_url.url);
    else feed.add(part.refusal);
  }
  if (message.role === 'assistant') for (const call of message.tool_calls ?? []) feed.add(JSON.stringify(call));
}

/** A hash fed pieces (each followed by a separator) until `maxChars` characters went in. */
class BoundedFeed {
  private readonly hash: Hash = createHash('sha256');
  private remaining: number;
  private fed = false;

  constructor(maxChars: number) {
    this.remaining = maxChars;
  }

  /** A fresh allowance of `maxChars` for what follows. */
  refill(maxChars: number): void {
    this.remaining = maxChars;
  }

  get full(): boolean {
    return this.remaining <= 0;
  }

  add(text: string): void {
    if (this.full) return;
    const piece = text.length > this.remaining ? text.slice(0, this.remaining) : text;
    this.hash.update(piece);
    this.hash.update('\u0000');
    this.remaining -= piece.length;
    this.fed = true;
  }

  digest(): string | undefined {
    return this.fed ? this.hash.digest('hex') : undefined;
  }
}
