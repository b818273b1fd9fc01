// Time limits of a routed request: each attempt's timeout (scaled with max_tokens where the model
// says how fast it writes) and the total deadline that bounds retries, waits and fallbacks together.
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from '../wire/anthropic-messages/anthropic-types.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';

export interface AttemptTimeoutInput {
  request: ChatRequest;
  stream: boolean;
  provider: { type: string; timeout_ms: number; first_token_timeout_ms?: number; default_max_tokens?: number };
  model: { ms_per_token?: number };
}

export interface AttemptTimeouts {
  /** chat: the whole exchange; stream: until the first upstream event. */
  timeoutMs: number;
  /** stream only: the longest silence between upstream reads after the first event. */
  idleTimeoutMs?: number;
}

/**
 * Non-streamed: timeout_ms, plus ms_per_token × max_tokens when the model sets ms_per_token (a long
 * answer legitimately takes long). Streamed: first_token_timeout_ms (default timeout_ms) to the first
 * event, then timeout_ms between events — a healthy stream is never cut for being long.
 */
export function computeAttemptTimeouts(input: AttemptTimeoutInput): AttemptTimeouts {
  const { provider } = input;
  if (input.stream) {
    return { timeoutMs: provider.first_token_timeout_ms ?? provider.timeout_ms, idleTimeoutMs: provider.timeout_ms };
  }
  const msPerToken = input.model.ms_per_token;
  const maxTokens =
    input.request.max_completion_tokens ?? input.request.max_tokens ?? (provider.type === 'anthropic' ? (provider.default_max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS) : undefined);
  if (msPerToken === undefined || maxTokens === undefined) return { timeoutMs: provider.timeout_ms };
  return { timeoutMs: Math.ceil(provider.timeout_ms + msPerToken * maxTokens) };
}

export class Deadline {
  readonly totalMs: number;
  private readonly start: number;
  private readonly now: () => number;

  constructor(totalMs: number, now: () => number) {
    this.totalMs = totalMs;
    this.now = now;
    this.start = now();
  }

  remainingMs(): number {
    return this.totalMs - (this.now() - this.start);
  }

  /** An attempt's timeout, shortened so it ends by the deadline. */
  bound(timeoutMs: number): number {
    return Math.max(1, Math.min(timeoutMs, Math.ceil(this.remainingMs())));
  }
}
