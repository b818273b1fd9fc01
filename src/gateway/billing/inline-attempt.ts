// Whether a request's single attempt can ride in its request row (ledger migration 4): only when the
// row's inline columns give back exactly the attempt row ledger_attempts would have held.
import type { AttemptRow, RequestRecord } from './ledger.ts';

export interface InlineAttempt {
  attempt: AttemptRow;
  /** The attempt's tokens, cost and currency are the request's (else: none, in the request's currency). */
  charged: boolean;
}

const TOKENS_AND_COST = ['promptTokens', 'cachedPromptTokens', 'cacheWriteTokens', 'completionTokens', 'reasoningTokens', 'costMicros', 'usdMicros', 'listUsdMicros'] as const;

/**
 * The attempt to store in the request row, or undefined when the attempts go to ledger_attempts: none,
 * two or more, or one the view could not rebuild exactly (another number, start or currency, or tokens
 * that are neither the request's nor zero).
 */
export function findInlineAttempt(request: RequestRecord, attempts: readonly AttemptRow[]): InlineAttempt | undefined {
  if (attempts.length !== 1 || request.attempts !== 1) return undefined;
  const attempt = attempts[0] as AttemptRow;
  if (attempt.attempt !== 1 || attempt.requestId !== request.requestId || attempt.currency !== request.currency) return undefined;
  if (Math.round(attempt.startedAt) !== Math.round(request.startedAt)) return undefined;
  if (attempt.estimated === request.estimated && TOKENS_AND_COST.every((k) => attempt[k] === request[k])) return { attempt, charged: true };
  if (!attempt.estimated && TOKENS_AND_COST.every((k) => attempt[k] === 0)) return { attempt, charged: false };
  return undefined;
}
