// The rolling-restart test as one function: steady runs with 1, 2 and 3 replicas behind HAProxy (throughput
// and per-process CPU), then a bounded mixed load during which the replicas are restarted one by one
// (SIGTERM, wait for the exit, start, wait until HAProxy has it UP), then the books are read back and checked.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cpuSeconds } from '../lib/bench-process.ts';
import { checkSoak, type ClientRequest } from '../soak/soak-checks.ts';
import { readLedger, sleepUntil, waitForLedgers } from '../soak/soak.ts';
import type { HerdReplica } from '../soak/soak-processes.ts';
import { checkRolling, type RestartEvent, type RollingReport, type SteadyRun } from './rolling-checks.ts';
import { createAgent, type LoadRequest, runLoad, send } from './rolling-load.ts';
import { startRpmLog } from './rpm-log.ts';
import { type Cleanups, type Stack, type StackOptions, startStack } from './rolling-stack.ts';

export interface RollingOptions extends Omit<StackOptions, 'replicas'> {
  seconds: number;
  concurrency: number;
  steadySeconds: number;
  /** Pause between one replica back UP and the next SIGTERM. */
  gapMs: number;
  /** Times every replica is restarted (more rounds, more chances to catch a race at a SIGTERM). */
  rounds: number;
}

const CACHE_MARKER = 900_000;
const STEADY_MARKERS = 200_000;

export async function runRollingRestart(o: RollingOptions, cleanups: Cleanups): Promise<RollingReport> {
  try {
    const stack = await startStack({ ...o, replicas: 3 }, cleanups);
    const agent = createAgent(o.concurrency);
    cleanups.add('client agent', () => agent.close());
    const steady = await steadyRuns(stack, o);
    // The cache: one deterministic request asked six times (round robin: every replica), stored once.
    const probes: LoadRequest[] = [];
    const plain = stack.keys.find((k) => k.name === 'plain');
    for (let i = 0; i < 6; i++) {
      probes.push(await send(agent, stack.haproxy.url, CACHE_MARKER, 'cache-probe', plain));
      if (i === 0) await new Promise((r) => setTimeout(r, 300));
    }
    const { requests, events, loadMs, t0, cpu, rpmAdmissions } = await rollingPhase(stack, o, agent);
    // Asked again after every replica restarted: only Redis can still hold the answer.
    for (let i = 0; i < 3; i++) probes.push(await send(agent, stack.haproxy.url, CACHE_MARKER, 'cache-probe', plain));
    const behind = await waitForLedgers(stack.replicas);
    for (const r of stack.replicas) await r.kill('SIGTERM');
    const spoolLeft = stack.replicas.flatMap((r) => safeList(join(stack.dir, `spool-${r.name}`)).filter((f) => f.endsWith('.jsonl')));
    const ledger = await readLedger(stack.databaseUrl);
    const logs = stack.replicas.map((r) => r.log).join('\n');
    const all = [...steady.flatMap((s) => s.requests), ...requests];
    const soak = checkSoak({
      seconds: o.seconds,
      loadMs,
      concurrency: o.concurrency,
      client: all.filter((r) => r.kind !== 'infer').map(asClientRequest),
      calls: stack.upstream.calls,
      ledger,
      keys: stack.soakKeys,
      events: [],
      resources: [],
      spoolLeft,
      ledgerBehindAtEnd: behind,
      uncheckedAdmits: 0,
      secretsInLogs: stack.secrets.filter((s) => logs.includes(s)).length,
      t0,
    });
    return checkRolling({
      options: o,
      network: { mode: stack.net.mode, reason: stack.net.reason, hostIp: stack.net.hostIp, replicas: stack.net.replicas.map((r) => r.ip) },
      requests,
      probes,
      cacheCalls: stack.upstream.calls.filter((c) => c.marker === CACHE_MARKER).length,
      events,
      loadMs,
      t0,
      cpu,
      steady: steady.map(({ requests: _r, ...rest }) => rest),
      soak,
      ledger,
      keys: stack.soakKeys,
      rpmAdmissions,
      haproxyLog: stack.haproxy.log,
    });
  } finally {
    await cleanups.runAll(o.log);
  }
}

/** 1, 2 then 3 replicas in rotation (the others in HAProxy maintenance), the chat key only, for steadySeconds each. */
async function steadyRuns(stack: Stack, o: RollingOptions): Promise<(SteadyRun & { requests: LoadRequest[] })[]> {
  const out: (SteadyRun & { requests: LoadRequest[] })[] = [];
  const names = stack.replicas.map((r) => r.name);
  let marker = STEADY_MARKERS;
  for (let n = 1; n <= names.length; n++) {
    for (const [i, name] of names.entries()) await stack.haproxy.setState(name, i < n ? 'ready' : 'maint');
    for (const [i, name] of names.entries()) await stack.haproxy.waitFor(name, i < n ? 'UP' : 'MAINT', 20_000);
    const agent = createAgent(o.concurrency);
    // A short warm-up on the same connections, not counted.
    const warmUntil = Date.now() + 1000;
    await runLoad({ agent, base: stack.haproxy.url, keys: stack.keys, concurrency: o.concurrency, firstMarker: marker, plainOnly: true, stop: () => Date.now() > warmUntil });
    marker += 20_000;
    const before = readCpu(stack);
    const started = Date.now();
    const until = started + o.steadySeconds * 1000;
    const requests = await runLoad({
      agent,
      base: stack.haproxy.url,
      keys: stack.keys,
      concurrency: o.concurrency,
      firstMarker: marker,
      plainOnly: true,
      stop: () => Date.now() > until,
    });
    const ms = Date.now() - started;
    const after = readCpu(stack);
    await agent.close();
    marker += 30_000;
    const cpu: Record<string, number> = {};
    for (const [k, v] of Object.entries(after)) cpu[k] = (v - (before[k] ?? 0)) / (ms / 1000);
    out.push({ replicas: n, ms, requests, ok: requests.filter((r) => r.complete).length, failed: requests.filter((r) => !r.complete).length, cpu });
    o.log(`steady ${n} replica(s): ${(requests.length / (ms / 1000)).toFixed(0)} req/s`);
  }
  for (const name of names) await stack.haproxy.setState(name, 'ready');
  for (const name of names) await stack.haproxy.waitFor(name, 'UP', 20_000);
  return out;
}

/** CPU seconds so far of every replica, HAProxy, and this process (the client, the fake upstream, the forwarders). */
function readCpu(stack: Stack): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of stack.replicas) if (r.pid !== undefined && r.running) out[r.name] = cpuSeconds(r.pid);
  if (stack.haproxy.pid !== undefined) out['haproxy (+ test forwards)'] = cpuSeconds(stack.haproxy.pid);
  out['harness (client, fake upstream)'] = cpuSeconds(process.pid);
  return out;
}

async function rollingPhase(stack: Stack, o: RollingOptions, agent: ReturnType<typeof createAgent>) {
  const events: RestartEvent[] = [];
  const cpu: Record<string, number> = {};
  const addCpu = (name: string, pid: number | undefined, from: number) => {
    if (pid !== undefined) cpu[name] = (cpu[name] ?? 0) + cpuSeconds(pid) - from;
  };
  const base = readCpu(stack);
  const rpmLog = startRpmLog(o.redisUrl, `${stack.redisPrefix}limits:*:rpm`);
  const t0 = Date.now();
  let restartsDone = false;
  let loadEnds = t0 + o.seconds * 1000;
  const load = runLoad({ agent, base: stack.haproxy.url, keys: stack.keys, concurrency: o.concurrency, firstMarker: 1, stop: () => restartsDone && Date.now() > loadEnds });
  await sleepUntil(t0 + 0.15 * o.seconds * 1000, () => false);
  for (let round = 0; round < o.rounds; round++)
    for (const r of stack.replicas) {
      await restartOne(stack, r, events, (pid, from) => addCpu(r.name, pid, from), base[r.name] ?? 0, o.gapMs);
      // The next life's CPU counts from 0: its start-up is work too.
      base[r.name] = 0;
    }
  restartsDone = true;
  // A few seconds of load with every replica back, so requests right after the last restart count too.
  loadEnds = Math.max(loadEnds, Date.now() + 3000);
  const requests = await load;
  const loadMs = Date.now() - t0;
  const rpmAdmissions = [...(await rpmLog.stop()).values()];
  const end = readCpu(stack);
  for (const r of stack.replicas) cpu[r.name] = (cpu[r.name] ?? 0) + (end[r.name] ?? 0);
  cpu['haproxy (+ test forwards)'] = (end['haproxy (+ test forwards)'] ?? 0) - (base['haproxy (+ test forwards)'] ?? 0);
  const self = 'harness (client, fake upstream)';
  cpu[self] = (end[self] ?? 0) - (base[self] ?? 0);
  o.log(`rolling load done: ${requests.length} requests in ${(loadMs / 1000).toFixed(1)} s`);
  return { requests, events, loadMs, t0, cpu, rpmAdmissions };
}

async function restartOne(
  stack: Stack,
  r: HerdReplica,
  events: RestartEvent[],
  countCpu: (pid: number | undefined, from: number) => void,
  cpuFrom: number,
  gapMs: number,
): Promise<void> {
  const pid = r.pid;
  countCpu(pid, cpuFrom);
  const sigtermAt = Date.now();
  const exiting = r.kill('SIGTERM');
  await exiting;
  const exitedAt = Date.now();
  const exitCode = r.child?.exitCode ?? null;
  await r.start();
  const listeningAt = Date.now();
  await stack.haproxy.waitFor(r.name, 'UP', 30_000);
  const upAt = Date.now();
  events.push({ replica: r.name, pid, sigtermAt, exitedAt, exitCode, listeningAt, upAt });
  // The new life's CPU is read at the end of the phase, from 0: its start-up counts.
  await new Promise((res) => setTimeout(res, gapMs));
}

function asClientRequest(r: LoadRequest): ClientRequest {
  const outcome = r.status !== undefined ? 'answered' : r.errorCode === 'timeout' ? 'hung' : 'cut';
  return {
    marker: r.marker,
    key: r.key ?? 'plain',
    replica: r.server ?? '?',
    stream: r.kind === 'stream',
    sentAt: r.sentAt,
    endedAt: r.endedAt,
    outcome,
    status: r.status,
    complete: r.complete,
    terminals: r.kind === 'stream' && r.status === 200 ? (r.complete ? 1 : 0) : 1,
    errorCode: r.errorCode,
  };
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
