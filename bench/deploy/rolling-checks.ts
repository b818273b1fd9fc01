// The rolling-restart test's pass criteria: no failed client request (each failure placed against the
// nearest SIGTERM), the soak's ledger invariants (exactly once, RPM, budgets), the budget strictly held,
// the cache shared, every replica exiting 0; plus the steady 1/2/3-replica throughput and CPU.
import type { InvariantRow, SoakKey, SoakLedger, SoakReport } from '../soak/soak-checks.ts';
import { expectedRefusal, failed, type LoadRequest } from './rolling-load.ts';
import { maxInWindow } from './rpm-log.ts';

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
  options: { seconds: number; concurrency: number; retryOn: string | undefined; retries: number; rpm: number; budgetMicros: number; gapMs: number; rounds: number };
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
  /** The limiter's admission times of the RPM key (Redis TIME), sampled from Redis through the run. */
  rpmAdmissions: number[][];
  haproxyLog: { at: number; line: string }[];
}

export interface RollingReport extends Omit<RollingInput, 'requests' | 'probes' | 'ledger' | 'keys' | 'rpmAdmissions'> {
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
    badExit.length === 0 && events.length === input.network.replicas.length * input.options.rounds,
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
  invariants.push(rpmRow(input.ledger, soak, input.keys, input.rpmAdmissions));
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
  const { requests: _r, probes: _p, ledger: _l, keys: _k, rpmAdmissions: _a, ...rest } = input;
  return { ...rest, invariants, failures, mix, perServer, total: requests.length, ok: invariants.every((i) => i.ok) };
}

/**
 * The limit as the limiter keeps it: its own admission log (Redis TIME) in any 60 s. The ledger's count by
 * started_at is shown beside it: started_at precedes admission by the request's wait in the replica, so a
 * window of arrivals can hold one more than any window of admissions on a loaded machine.
 */
function rpmRow(ledger: SoakLedger, soak: SoakReport, keys: readonly SoakKey[], admissions: readonly number[][]): InvariantRow {
  const limit = soak.rpm[0]?.limit ?? keys.find((k) => k.rpm !== undefined)?.rpm ?? 0;
  const logged = admissions.flat().length;
  const most = Math.max(0, ...admissions.map((a) => maxInWindow(a, 60_000)));
  const ledgerRows = soak.rpm.map((r) => {
    const id = keys.find((k) => k.name === r.key)?.id;
    const ok = ledger.requests.filter((q) => q.key_id === id && q.status === 'ok').length;
    return `ledger: ${r.admitted} rows (${ok} ok), at most ${r.maxInWindow} by started_at in any 60 s`;
  });
  return {
    invariant: "RPM exact across the three replicas: the limiter's admissions (its Redis log, Redis TIME) in any 60 s ≤ the limit",
    ok: admissions.length === 1 && most <= limit,
    detail: `limit ${limit}; ${logged} admissions logged, at most ${most} in any 60 s; ${ledgerRows.join('; ')}`,
  };
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
