// The rolling-restart test's pass criteria: no failed client request (each failure placed against the
// nearest SIGTERM), the soak's ledger invariants (exactly once, RPM, budgets), the budget strictly held,
// the cache shared, every replica exiting 0; plus the steady 1/2/3-replica throughput and CPU.
import type { InvariantRow, SoakKey, SoakLedger, SoakReport } from '../soak/soak-checks.ts';
import { expectedRefusal, failed, type LoadRequest } from './rolling-load.ts';

export interface RestartEvent {
  replica: string;
  pid: number | undefined;
  sigtermAt: number;
  exitedAt: number;
  exitCode: number | null;
  listeningAt: number;
  upAt: number;
}

export interface SteadyRun {
  replicas: number;
  ms: number;
  ok: number;
  failed: number;
  /** CPU cores used on average over the run, per process. */
  cpu: Record<string, number>;
}

export interface FailureRow {
  marker: number;
  kind: string;
  key: string | undefined;
  status: number | undefined;
  errorCode: string | undefined;
  message: string | undefined;
  server: string | undefined;
  /** Sent and ended, ms relative to the nearest SIGTERM (negative: before it), and that SIGTERM's replica. */
  sentRel: number;
  endedRel: number;
  nearest: string;
}

export interface RollingInput {
  options: { seconds: number; concurrency: number; retryOn: string | undefined; retries: number; rpm: number; budgetMicros: number; gapMs: number };
  network: { mode: 'netns' | 'loopback'; reason: string | undefined; hostIp: string; replicas: string[] };
  requests: LoadRequest[];
  probes: LoadRequest[];
  cacheCalls: number;
  events: RestartEvent[];
  loadMs: number;
  t0: number;
  cpu: Record<string, number>;
  steady: SteadyRun[];
  soak: SoakReport;
  ledger: SoakLedger;
  keys: SoakKey[];
  haproxyLog: { at: number; line: string }[];
}

export interface RollingReport extends Omit<RollingInput, 'requests' | 'probes' | 'ledger' | 'keys'> {
  invariants: InvariantRow[];
  failures: FailureRow[];
  mix: Record<string, number>;
  perServer: Record<string, number>;
  total: number;
  ok: boolean;
}

export function checkRolling(input: RollingInput): RollingReport {
  const { requests, probes, events, soak } = input;
  const invariants: InvariantRow[] = [];
  const row = (invariant: string, ok: boolean, detail: string) => invariants.push({ invariant, ok, detail });

  const failures = requests.filter(failed).map((r) => placeFailure(r, events));
  const refused = requests.filter(expectedRefusal).length;
  row(
    'no failed client request (any answer but a complete 2xx or the expected 429s of the RPM and budget keys; any connection error)',
    failures.length === 0,
    `${requests.length} requests: ${requests.filter((r) => r.complete).length} complete, ${refused} expected 429s, ${failures.length} failed`,
  );
  const badExit = events.filter((e) => e.exitCode !== 0);
  row(
    'every replica exited 0 on SIGTERM and came back',
    badExit.length === 0 && events.length === input.network.replicas.length,
    events
      .map(
        (e) =>
          `${e.replica}: exit ${e.exitCode} after ${e.exitedAt - e.sigtermAt} ms, listening ${e.listeningAt - e.exitedAt} ms later, UP in HAProxy after ${e.upAt - e.listeningAt} ms`,
      )
      .join('; '),
  );
  // The soak's RPM row counts by the ledger's started_at, which precedes the limiter's own stamp (Redis TIME,
  // at admission) by the request's parse and auth time: replaced by one that allows for that lag.
  for (const r of soak.invariants) if (!r.invariant.startsWith('RPM held')) invariants.push(r);
  invariants.push(rpmRow(input.ledger, soak, input.keys));
  const overBudget = soak.budgets.filter((b) => b.counter > b.budget);
  row(
    'the budget key spent no more than its budget (strictly)',
    overBudget.length === 0 && soak.budgets.length > 0,
    soak.budgets.map((b) => `${b.key}: ${b.counter} µ of ${b.budget} µ`).join('; ') || 'the budget key spent nothing',
  );
  const hits = probes.filter((p) => p.cache === 'hit').length;
  row(
    'the cache is shared: one deterministic request asked on every replica (and again after every restart) went upstream once',
    input.cacheCalls === 1 && hits === probes.length - 1 && probes.every((p) => p.complete),
    `${probes.length} asks, ${input.cacheCalls} upstream call(s), ${hits} answered x-herd-cache: hit (by ${[...new Set(probes.map((p) => p.server))].join(', ')})`,
  );

  const mix: Record<string, number> = {};
  const perServer: Record<string, number> = {};
  for (const r of requests) {
    const label = `${r.kind} ${r.key ?? ''} ${r.status ?? r.errorCode}${r.status !== 200 && r.status !== undefined ? ` ${r.errorCode}` : ''}`.replace(/\s+/g, ' ');
    mix[label] = (mix[label] ?? 0) + 1;
    const s = r.server ?? '(none)';
    perServer[s] = (perServer[s] ?? 0) + 1;
  }
  const { requests: _r, probes: _p, ledger: _l, keys: _k, ...rest } = input;
  return { ...rest, invariants, failures, mix, perServer, total: requests.length, ok: invariants.every((i) => i.ok) };
}

/** Admitted requests of each RPM key in any 60 s of started_at, and in any 59 s (1 s for the admission lag). */
function rpmRow(ledger: SoakLedger, soak: SoakReport, keys: readonly SoakKey[]): InvariantRow {
  const rows = soak.rpm.map((r) => {
    const times = ledger.requests
      .filter((q) => q.key_id === keys.find((k) => k.name === r.key)?.id && q.status !== 'RATE_LIMITED')
      .map((q) => q.started_at)
      .sort((a, b) => a - b);
    return { ...r, lagged: maxInWindow(times, 59_000) };
  });
  return {
    invariant:
      "RPM exact across the three replicas: admitted requests of the RPM key in any window ≤ its limit (by the ledger's started_at; 59 s windows allow 1 s between arrival and the limiter's stamp)",
    ok: rows.length > 0 && rows.every((r) => r.lagged <= r.limit),
    detail: rows.map((r) => `${r.key}: limit ${r.limit}, ${r.admitted} admitted, at most ${r.lagged} in any 59 s, ${r.maxInWindow} in any 60 s`).join('; '),
  };
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

function placeFailure(r: LoadRequest, events: readonly RestartEvent[]): FailureRow {
  let nearest: RestartEvent | undefined;
  for (const e of events) if (nearest === undefined || Math.abs(r.endedAt - e.sigtermAt) < Math.abs(r.endedAt - nearest.sigtermAt)) nearest = e;
  const at = nearest?.sigtermAt ?? r.sentAt;
  return {
    marker: r.marker,
    kind: r.kind,
    key: r.key,
    status: r.status,
    errorCode: r.errorCode,
    message: r.message,
    server: r.server,
    sentRel: r.sentAt - at,
    endedRel: r.endedAt - at,
    nearest: nearest?.replica ?? '-',
  };
}
