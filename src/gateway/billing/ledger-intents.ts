// Attempt intents: a line spooled synchronously before an upstream call is sent, so a call in flight when
// the process is killed still becomes an attempt row (outcome `interrupted`) at the next start-up.
import type { CurrencyCode } from './money.ts';
import type { AttemptRow, RequestRecord } from './ledger.ts';
import type { AttemptIntent } from './attempt-intent.ts';
import type { LedgerEntry } from './ledger-entry.ts';

export type { AttemptIntent } from './attempt-intent.ts';

export const INTERRUPTED = 'interrupted';

/** One spool line; an object (not the [request, attempts] array of an entry), so older readers skip it. */
export function intentLine(i: AttemptIntent): string {
  return `${JSON.stringify({ intent: [i.requestId, i.attempt, i.keyId, i.requestedModel, i.model, i.provider, i.upstreamModel, i.startedAt] })}\n`;
}

export function parseIntentLine(line: string): AttemptIntent | undefined {
  if (!line.startsWith('{"intent":')) return undefined;
  try {
    const [requestId, attempt, keyId, requestedModel, model, provider, upstreamModel, startedAt] = (JSON.parse(line) as { intent: unknown[] }).intent;
    if (typeof requestId !== 'string' || typeof attempt !== 'number') return undefined;
    return {
      requestId,
      attempt,
      keyId: String(keyId),
      requestedModel: String(requestedModel),
      model: String(model),
      provider: String(provider),
      upstreamModel: String(upstreamModel),
      startedAt: Number(startedAt),
    };
  } catch {
    return undefined; // torn line: the call was not sent
  }
}

/**
 * Entries for the intents no leftover entry (and no row already in the database, per `hasAttempt`) settled:
 * an `interrupted` attempt with no tokens, and a request row marked `interrupted` when the request has none.
 * Deterministic, so a replay after another crash inserts the same rows, which the writer ignores.
 */
export function recoverIntents(
  intents: readonly AttemptIntent[],
  leftovers: readonly LedgerEntry[],
  currency: CurrencyCode,
  hasAttempt: (requestId: string, attempt: number) => boolean = () => false,
): LedgerEntry[] {
  const settled = new Set<string>();
  for (const e of leftovers) {
    for (const a of e.attempts) settled.add(`${a.requestId}\u0000${a.attempt}`);
  }
  const byRequest = new Map<string, AttemptIntent[]>();
  for (const i of intents) {
    const key = `${i.requestId}\u0000${i.attempt}`;
    if (settled.has(key) || hasAttempt(i.requestId, i.attempt)) continue;
    settled.add(key);
    const list = byRequest.get(i.requestId) ?? [];
    list.push(i);
    byRequest.set(i.requestId, list);
  }
  const zero = { promptTokens: 0, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 0, reasoningTokens: 0, estimated: false };
  const money = { currency, costMicros: 0, usdMicros: 0, listUsdMicros: 0 };
  const out: LedgerEntry[] = [];
  for (const [requestId, list] of byRequest) {
    const attempts: AttemptRow[] = list.map((i) => ({
      ...zero,
      ...money,
      requestId,
      attempt: i.attempt,
      model: i.model,
      provider: i.provider,
      upstreamModel: i.upstreamModel,
      outcome: INTERRUPTED,
      httpStatus: undefined,
      latencyMs: 0,
      ttftMs: undefined,
      startedAt: i.startedAt,
    }));
    const first = list[0] as AttemptIntent;
    const last = list[list.length - 1] as AttemptIntent;
    const request: RequestRecord = {
      ...zero,
      ...money,
      requestId,
      keyId: first.keyId,
      keyName: undefined,
      requestedModel: first.requestedModel,
      model: undefined,
      provider: last.provider,
      upstreamModel: last.upstreamModel,
      status: INTERRUPTED,
      httpStatus: undefined,
      cacheHit: false,
      savedMicros: 0,
      priority: undefined,
      attempts: Math.max(...list.map((i) => i.attempt)),
      latencyMs: 0,
      ttftMs: undefined,
      priceSource: undefined,
      priceEffectiveAt: undefined,
      startedAt: first.startedAt,
      finishedAt: last.startedAt,
    };
    // A request row already held (leftovers or database) wins: the writer ignores rows already present.
    out.push({ request, attempts });
  }
  return out;
}
