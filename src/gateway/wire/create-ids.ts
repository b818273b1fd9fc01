// Ids Herd makes up when an upstream gives none, shaped like OpenAI's and safe for every upstream's
// id rules (Anthropic's tool_use ids must match ^[a-zA-Z0-9_-]+$).
import { randomBytes } from 'node:crypto';

export function createCompletionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}

export function createToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/** Unix seconds, as OpenAI's `created`. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
