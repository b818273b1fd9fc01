// The soak's invariants, checked against what the client saw, what the fake upstreams saw and what the
// ledger holds afterwards; each becomes a row (pass / FAIL with the numbers), plus the tables behind them.
import { reportedUsage, type UpstreamCall } from './fault-upstream.ts';
import type { Resources } from './soak-processes.ts';

export interface SoakKey {
  name: string;
  id: string;
  secret: string;
  rpm?: number;
  budgetMicros?: number;
}

export interface ClientRequest {
  marker: number;
  key: string;
  replica: string;
  stream: boolean;
  sentAt: number;
  endedAt: number;
  /** answered: an HTTP status and a body read to its end; cut: the connection broke; hung: no answer in 30 s. */
  outcome: 'answered' | 'refused-connect' | 'cut' | 'hung';
  status: number | undefined;
  /** 200 and the whole answer: JSON with choices, or a stream ending in one [DONE] with no error event. */
  complete: boolean;
  /** Streams: [DONE] lines plus error events (exactly one is right); JSON: 1. */
  terminals: number;
  errorCode: string | undefined;
}

export interface FaultEvent {
  what: string;
  from: number;
  until: number;
  kind?: 'redis' | 'postgres';
}

export interface ProcessResources {
  process: string;
  pid: number | undefined;
  start: Resources | undefined;
  end: Resources | undefined;
  /** Read every SAMPLE_EVERY_MS through the process's life, to tell a leak (still growing) from warm-up (a plateau). */
  samples: (Resources & { atMs: number })[];
}

export interface SoakLedger {
  requests: {
    request_id: string;
    key_id: string;
    status: string;
    prompt_tokens: number;
    completion_tokens: number;
    estimated: number;
    cost_micros: number;
    started_at: number;
    attempts: number;
  }[];
  attempts: { request_id: string; attempt: number; provider: string | null; outcome: string; http_status: number | null }[];
  reservations: { request_id: string; key_id: string; state: string; estimate_micros: number; actual_micros: number | null }[];
  spend: { key_id: string; period: string; micros: number }[];
}

export interface SoakInput {
  seconds: number;
  loadMs: number;
  concurrency: number;
  client: ClientRequest[];
  calls: UpstreamCall[];
  ledger: SoakLedger;
  keys: SoakKey[];
  events: FaultEvent[];
  resources: ProcessResources[];
  spoolLeft: string[];
  ledgerBehindAtEnd: number;
  /** Requests the replicas let through unchecked while they could not reach Redis (fail_open), at the end of the run. */
  uncheckedAdmits: number;
  secretsInLogs: number;
  t0: number;
}

export interface InvariantRow {
  invariant: string;
  ok: boolean;
  detail: string;
}

export interface SoakReport {
  input: Omit<SoakInput, 'client' | 'calls' | 'ledger'>;
  invariants: InvariantRow[];
  outcomes: Record<string, number>;
  faultModes: Record<string, number>;
  budgets: { key: string; period: string; budget: number; counter: number; settled: number; openHolds: number; maxReservation: number; over: number }[];
  rpm: { key: string; limit: number; segment: string; maxInWindow: number; admitted: number }[];
  violations: string[];
}

const WINDOW_MS = 60_000;

export function checkSoak(input: SoakInput): SoakReport {
  const { client, calls, ledger, keys } = input;
  const invariants: InvariantRow[] = [];
  const violations: string[] = [];
  const row = (invariant: string, ok: boolean, detail: string) => invariants.push({ invariant, ok, detail });

  const callsByMarker = groupBy(calls, (c) => c.marker);
  const okRowsByTokens = groupBy(
    ledger.requests.filter((r) => r.status === 'ok' && r.estimated === 0),
    (r) => r.completion_tokens,
  );
  const attemptsByRequest = groupBy(ledger.attempts, (a) => a.request_id);
  const keyById = new Map(keys.map((k) => [k.id, k]));

  // 1. Every complete 200 the client saw is in the ledger once, with the upstream's tokens (or estimated).
  let once = 0;
  let estimatedExpected = 0;
  const missing: number[] = [];
  const twice: number[] = [];
  const wrongTokens: number[] = [];
  for (const req of client.filter((c) => c.complete)) {
    const answered = (callsByMarker.get(req.marker) ?? []).find((c) => c.usage !== undefined);
    if (!answered) {
      estimatedExpected++;
      continue;
    }
    const rows = okRowsByTokens.get(reportedUsage(req.marker).completion_tokens) ?? [];
    if (rows.length === 0) missing.push(req.marker);
    else if (rows.length > 1) twice.push(req.marker);
    else if (rows[0]?.prompt_tokens !== answered.usage?.prompt_tokens) wrongTokens.push(req.marker);
    else once++;
  }
  const estimatedRows = ledger.requests.filter((r) => r.status === 'ok' && r.estimated === 1).length;
  const completeCount = client.filter((c) => c.complete).length;
  row(
    'every 200 the client received is in the ledger exactly once, with the tokens the upstream reported',
    missing.length === 0 && twice.length === 0 && wrongTokens.length === 0,
    `${completeCount} complete answers: ${once} found once with the upstream's tokens; missing ${missing.length}, twice ${twice.length}, other tokens ${wrongTokens.length}`,
  );
  row(
    '…or marked estimated where the upstream sent no usage',
    estimatedRows >= estimatedExpected,
    `${estimatedExpected} complete answers without upstream usage; ${estimatedRows} ok rows marked estimated (more: answers cut at a SIGKILL after their rows were saved)`,
  );
  if (missing.length) violations.push(`answered but not in the ledger: markers ${sample(missing)}`);
  if (twice.length) violations.push(`answered and in the ledger twice: markers ${sample(twice)}`);
  if (wrongTokens.length) violations.push(`ledger tokens differ from the upstream's: markers ${sample(wrongTokens)}`);

  // 2. Upstream calls and attempt rows.
  const answeredMarkers = new Set(client.filter((c) => c.outcome === 'answered').map((c) => c.marker));
  const lostMarkers = new Set(client.filter((c) => c.outcome === 'cut' || c.outcome === 'hung').map((c) => c.marker));
  const callsAnswered = calls.filter((c) => answeredMarkers.has(c.marker)).length;
  const callsLost = calls.filter((c) => lostMarkers.has(c.marker)).length;
  const strays = calls.filter((c) => !answeredMarkers.has(c.marker) && !lostMarkers.has(c.marker)).length;
  const attemptRows = ledger.attempts.length;
  let perRequestMismatch = 0;
  let perRequestChecked = 0;
  const mismatchSamples: string[] = [];
  for (const [marker, markerCalls] of callsByMarker) {
    if (!answeredMarkers.has(marker)) continue;
    const rows = okRowsByTokens.get(reportedUsage(marker).completion_tokens);
    if (rows?.length !== 1) continue;
    perRequestChecked++;
    const attempts = attemptsByRequest.get((rows[0] as { request_id: string }).request_id) ?? [];
    if (attempts.length !== markerCalls.length) {
      perRequestMismatch++;
      if (mismatchSamples.length < 5)
        mismatchSamples.push(
          `marker ${marker}: ${markerCalls.length} calls (${markerCalls.map((c) => c.mode).join(',')}), ${attempts.length} attempt rows (${attempts.map((a) => `#${a.attempt} ${a.outcome}`).join(', ')})`,
        );
    }
  }
  // Exact: a call in flight at a SIGKILL left an intent, which recovery turned into an `interrupted` row.
  const globalOk = attemptRows === calls.length;
  row(
    'every upstream call is an attempt row, and no attempt row without a call',
    globalOk && perRequestMismatch === 0,
    `${calls.length} calls (${callsAnswered} for requests answered, ${callsLost} for requests cut off at a kill, ${strays} other); ${attemptRows} attempt rows; per request: ${perRequestChecked} checked, ${perRequestMismatch} differ`,
  );
  if (!globalOk) violations.push(`attempt rows ${attemptRows} differ from the ${calls.length} upstream calls`);
  if (perRequestMismatch) violations.push(`calls and attempt rows differ: ${mismatchSamples.join('; ')}`);
  const interrupted = ledger.attempts.filter((a) => a.outcome === 'interrupted').length;
  row(
    'upstream calls in flight at a SIGKILL (recovered from their intents)',
    true,
    `${interrupted} attempt rows with outcome interrupted; ${callsLost} calls belong to requests whose answer was cut off`,
  );

  // 3. Budgets: no key past its budget by more than one reservation; the counter is settled charges plus open holds.
  const budgets: SoakReport['budgets'] = [];
  for (const key of keys.filter((k) => k.budgetMicros !== undefined)) {
    const reservations = ledger.reservations.filter((r) => r.key_id === key.id);
    const maxReservation = Math.max(0, ...reservations.map((r) => r.estimate_micros));
    const settled = reservations.filter((r) => r.state === 'settled').reduce((s, r) => s + (r.actual_micros ?? 0), 0);
    const openHolds = reservations.filter((r) => r.state === 'open').reduce((s, r) => s + r.estimate_micros, 0);
    for (const spend of ledger.spend.filter((s) => s.key_id === key.id)) {
      const budget = key.budgetMicros as number;
      budgets.push({ key: key.name, period: spend.period, budget, counter: spend.micros, settled, openHolds, maxReservation, over: Math.max(0, spend.micros - budget) });
    }
  }
  const overspent = budgets.filter((b) => b.over > b.maxReservation);
  row(
    'no key spent more than its budget by more than one reservation',
    overspent.length === 0,
    budgets.map((b) => `${b.key}: ${fmtUsd(b.counter)} of ${fmtUsd(b.budget)} (one reservation ${fmtUsd(b.maxReservation)})`).join('; ') || 'no budgeted key spent',
  );
  for (const b of overspent) violations.push(`${b.key} spent ${fmtUsd(b.counter)} against a budget of ${fmtUsd(b.budget)}`);
  const multiDay = new Set(budgets.map((b) => b.period)).size > 1;
  const counterMismatch = multiDay ? [] : budgets.filter((b) => b.counter !== b.settled + b.openHolds);
  row(
    "each budgeted key's spend counter = its settled charges + its open holds (nothing charged twice)",
    counterMismatch.length === 0,
    multiDay
      ? 'the run crossed a UTC day: checked per day above only'
      : budgets.map((b) => `${b.key}: counter ${b.counter} = settled ${b.settled} + open ${b.openHolds}`).join('; ') || 'no budgeted key spent',
  );
  for (const b of counterMismatch) violations.push(`${b.key}: spend counter ${b.counter} ≠ settled ${b.settled} + open holds ${b.openHolds}`);
  const settledWrong = ledger.reservations.filter((r) => {
    if (r.state !== 'settled') return false;
    const req = ledger.requests.find((q) => q.request_id === r.request_id);
    return req !== undefined && req.cost_micros !== r.actual_micros;
  });
  row(
    'every settled reservation is charged its request row’s cost',
    settledWrong.length === 0,
    `${ledger.reservations.filter((r) => r.state === 'settled').length} settled; ${settledWrong.length} differ`,
  );
  const openLeft = ledger.reservations.filter((r) => r.state === 'open');
  row(
    'reservations left open (held until the next start’s recovery; from requests cut off at the SIGKILL)',
    true,
    `${openLeft.length} open (${fmtUsd(openLeft.reduce((s, r) => s + r.estimate_micros, 0))} held)`,
  );

  // 4. RPM across replicas: exact within one Redis life; a restart forgets the window (documented).
  const rpm: SoakReport['rpm'] = [];
  const redisEvents = input.events.filter((e) => e.kind === 'redis');
  const segments: { name: string; from: number; until: number }[] = [];
  let from = input.t0;
  for (const e of redisEvents) {
    segments.push({ name: `before ${new Date(e.from).toISOString().slice(11, 19)} restart`, from, until: e.from });
    from = e.until;
  }
  segments.push({ name: redisEvents.length ? 'after the restart' : 'whole run', from, until: Number.POSITIVE_INFINITY });
  for (const key of keys.filter((k) => k.rpm !== undefined)) {
    const admitted = ledger.requests
      .filter((r) => r.key_id === key.id && r.status !== 'RATE_LIMITED')
      .map((r) => r.started_at)
      .sort((a, b) => a - b);
    for (const seg of segments) {
      const times = admitted.filter((t) => t >= seg.from && t < seg.until);
      rpm.push({ key: key.name, limit: key.rpm as number, segment: seg.name, maxInWindow: maxInWindow(times, WINDOW_MS), admitted: times.length });
    }
  }
  // fail_open lets requests through uncounted while a replica cannot reach Redis (its reconnect lags the server's restart).
  const slack = input.uncheckedAdmits;
  const rpmOver = rpm.filter((r) => r.maxInWindow > r.limit + slack);
  row(
    'RPM held across both replicas within one Redis life, within the documented error (+ requests let through unchecked while Redis was unreachable, fail_open)',
    rpmOver.length === 0,
    `${rpm.map((r) => `${r.key} ${r.segment}: at most ${r.maxInWindow} in any 60 s (limit ${r.limit})`).join('; ') || 'no RPM key'}; let through unchecked (all keys, both replicas): ${slack}`,
  );
  for (const r of rpmOver) violations.push(`${r.key} (${r.segment}): ${r.maxInWindow} requests admitted in 60 s, limit ${r.limit}`);

  // 5. Exactly one answer per accepted request.
  const outcomes: Record<string, number> = {};
  for (const c of client) {
    const label =
      c.outcome === 'answered'
        ? `answered ${c.status}${c.status === 200 && !c.complete ? ' (error event in the stream)' : ''}${c.errorCode && c.status !== 200 ? ` ${c.errorCode}` : ''}`
        : c.outcome;
    outcomes[label] = (outcomes[label] ?? 0) + 1;
  }
  const hung = client.filter((c) => c.outcome === 'hung');
  const badTerminals = client.filter((c) => c.outcome === 'answered' && c.stream && c.status === 200 && c.terminals !== 1);
  const cutOutsideKill = client.filter((c) => c.outcome === 'cut' && !input.events.some((e) => e.what.startsWith('SIGKILL') && c.sentAt <= e.until && c.endedAt >= e.from - 1000));
  row(
    'every accepted request got exactly one answer (no hang; a stream ends in one [DONE] or one error event)',
    hung.length === 0 && badTerminals.length === 0 && cutOutsideKill.length === 0,
    `${client.length} requests: ${hung.length} hung, ${badTerminals.length} streams with ≠1 ending, ${client.filter((c) => c.outcome === 'cut').length} cut by the SIGKILL (${cutOutsideKill.length} cut at another time), ${client.filter((c) => c.outcome === 'refused-connect').length} refused at connect (replica down)`,
  );
  if (hung.length) violations.push(`${hung.length} requests had no answer in 30 s: markers ${sample(hung.map((c) => c.marker))}`);
  if (badTerminals.length) violations.push(`${badTerminals.length} streams did not end exactly once: markers ${sample(badTerminals.map((c) => c.marker))}`);
  if (cutOutsideKill.length) violations.push(`${cutOutsideKill.length} connections broke outside the SIGKILL: markers ${sample(cutOutsideKill.map((c) => c.marker))}`);

  // 6. The ledger caught up, the spools emptied, no secret logged.
  row(
    'after the run every replica’s ledger caught up and its spool is empty',
    input.ledgerBehindAtEnd === 0 && input.spoolLeft.length === 0,
    `behind ${input.ledgerBehindAtEnd} rows; spool files left: ${input.spoolLeft.length}`,
  );
  row('no key or upstream secret in any replica’s log', input.secretsInLogs === 0, `${input.secretsInLogs} secrets found`);
  const unknownKeys = ledger.requests.filter((r) => !keyById.has(r.key_id)).length;
  row('every ledger row belongs to a soak key', unknownKeys === 0, `${unknownKeys} rows of other keys`);

  const faultModes: Record<string, number> = {};
  for (const c of calls) faultModes[c.mode] = (faultModes[c.mode] ?? 0) + 1;
  const { client: _c, calls: _k, ledger: _l, ...rest } = input;
  return { input: rest, invariants, outcomes, faultModes, budgets, rpm, violations };
}

function maxInWindow(sorted: readonly number[], windowMs: number): number {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < sorted.length; hi++) {
    while ((sorted[hi] as number) - (sorted[lo] as number) >= windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

function groupBy<T, K>(items: readonly T[], keyOf: (item: T) => K): Map<K, T[]> {
  const map = new Map<K, T[]>();
  for (const item of items) {
    const k = keyOf(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}

function sample(markers: readonly number[]): string {
  return markers.length > 8 ? `${markers.slice(0, 8).join(', ')} … (${markers.length})` : markers.join(', ');
}

export function fmtUsd(micros: number): string {
  return `$${(micros / 1_000_000).toFixed(4)}`;
}
