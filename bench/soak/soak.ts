// The soak with faults, as one function (bench/soak/run-soak.ts and test/e2e/soak-short.test.ts call it):
// fake upstreams with fault modes, two Herd replicas sharing a Redis of the soak's own and a PostgreSQL
// ledger reached through a TCP proxy, a client load across keys with budgets and RPM limits; meanwhile a
// replica is SIGKILLed and restarted, Redis restarted, PostgreSQL cut off. Then the books are read back.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startTcpFaultProxy, targetOf, throughProxy } from '../../test/helpers/tcp-fault-proxy.ts';
import { startFaultUpstreams, type UpstreamCall } from './fault-upstream.ts';
import { checkSoak, type SoakKey, type SoakLedger, type SoakReport, type ClientRequest, type FaultEvent, type ProcessResources } from './soak-checks.ts';
import { createKey, freePort, HerdReplica, readResources, RedisServer } from './soak-processes.ts';

/** How often every process's RSS and open fds are read during the run. */
const SAMPLE_EVERY_MS = 2000;

export interface SoakOptions {
  seconds: number;
  /** Client requests in flight at once. */
  concurrency: number;
  /** PostgreSQL to create the soak's database on (it is dropped afterwards unless keepDatabase). */
  databaseUrl: string;
  keepDatabase?: boolean;
  log?: (line: string) => void;
}

const MASTER = `sk-herd-soak-master-${randomBytes(12).toString('hex')}`;
const UPSTREAM_SECRET = `sk-upstream-soak-${randomBytes(8).toString('hex')}`;
const MAX_TOKENS = 20_000;
const REQUEST_TIMEOUT_MS = 30_000;

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => undefined);
  const durationMs = options.seconds * 1000;
  const dir = mkdtempSync(join(tmpdir(), 'herd-soak-'));
  const cleanups: (() => Promise<void>)[] = [];
  try {
    const upstreams = await startFaultUpstreams(['fa', 'fb'], { hangMs: 2500, slowMs: 400 });
    cleanups.push(() => upstreams.close());
    const redis = new RedisServer(await freePort());
    await redis.start();
    cleanups.push(() => redis.stop());
    const database = await createDatabase(options.databaseUrl);
    if (!options.keepDatabase) cleanups.push(() => database.drop());
    const pgProxy = await startTcpFaultProxy(targetOf(database.url, 5432));
    cleanups.push(() => pgProxy.close());

    const keysDb = join(dir, 'keys.db');
    const keyFlags: Record<string, { flags: string[]; rpm?: number; budgetMicros?: number }> = {
      budget: { flags: ['--budget-day', '0.05'], budgetMicros: 50_000 },
      rpm: { flags: ['--rpm', String(Math.max(10, Math.round(options.seconds / 2)))], rpm: Math.max(10, Math.round(options.seconds / 2)) },
      both: { flags: ['--budget-day', '0.10', '--rpm', String(Math.max(20, options.seconds))], budgetMicros: 100_000, rpm: Math.max(20, options.seconds) },
      free: { flags: [] },
    };
    const keys: SoakKey[] = await Promise.all(
      Object.entries(keyFlags).map(async ([name, spec]) => {
        const { id, secret } = await createKey(keysDb, `soak-${name}`, spec.flags);
        return { name, id, secret, ...(spec.rpm !== undefined ? { rpm: spec.rpm } : {}), ...(spec.budgetMicros !== undefined ? { budgetMicros: spec.budgetMicros } : {}) };
      }),
    );

    const replicas = ['a', 'b'].map((name) => {
      const config = join(dir, `herd-${name}.yaml`);
      writeFileSync(
        config,
        replicaConfig(name, { keysDb, ledger: throughProxy(database.url, pgProxy), spool: join(dir, `spool-${name}`), redis: redis.url, upstreams: upstreams.urls }),
      );
      return new HerdReplica(name, config, { SOAK_MASTER: MASTER, SOAK_UPSTREAM_KEY: UPSTREAM_SECRET });
    });
    await Promise.all(replicas.map((r) => r.start()));
    cleanups.push(async () => {
      for (const r of replicas) await r.kill('SIGKILL');
    });
    log(`replicas up: ${replicas.map((r) => `${r.name} ${r.url}`).join(', ')}; redis ${redis.url}; ledger through proxy :${pgProxy.port}`);

    const resources: ProcessResources[] = [];
    const lifeOf = (label: string, pid: number | undefined): ProcessResources => {
      const life: ProcessResources = { process: label, start: readResources(pid), end: undefined, pid, samples: [] };
      resources.push(life);
      return life;
    };
    const sampler = setInterval(() => {
      for (const life of resources) {
        if (life.end !== undefined) continue;
        const now = readResources(life.pid);
        if (now !== undefined) life.samples.push({ ...now, atMs: Date.now() });
      }
    }, SAMPLE_EVERY_MS);
    cleanups.push(async () => clearInterval(sampler));
    const lives = new Map(replicas.map((r) => [r.name, lifeOf(`replica ${r.name}`, r.pid)]));
    const redisLife = { current: lifeOf('redis-server', redis.pid) };
    const self = lifeOf('soak process (fakes, proxy, client)', process.pid);

    const events: FaultEvent[] = [];
    const t0 = Date.now();
    const client: ClientRequest[] = [];
    let stopping = false;
    let next = 0;
    const loops = Array.from({ length: options.concurrency }, async () => {
      while (!stopping) {
        const marker = next++;
        const key = keys[pick(marker, 1, keys.length)] as SoakKey;
        let replica = replicas[pick(marker, 2, 2)] as HerdReplica;
        if (!replica.running || replica.url === '') replica = replicas.find((r) => r.running && r.url !== '') ?? replica;
        client.push(await ask(replica, key, marker, pick(marker, 3, 2) === 0));
      }
    });

    const at = (fraction: number) => sleepUntil(t0 + fraction * durationMs, () => stopping);
    const faults = (async () => {
      await at(0.2);
      const victim = replicas[0] as HerdReplica;
      const killedAt = Date.now();
      (lives.get(victim.name) as ProcessResources).end = readResources(victim.pid);
      await victim.kill('SIGKILL');
      log(`SIGKILL replica ${victim.name}`);
      // The restart runs alongside the other faults: a loaded machine may take many seconds to start one.
      const restarted = victim.start().then(() => {
        lives.set(victim.name, lifeOf(`replica ${victim.name} (restarted)`, victim.pid));
        events.push({ what: `SIGKILL replica ${victim.name}, restarted`, from: killedAt, until: Date.now() });
        log(`replica ${victim.name} back at ${victim.url}`);
      });

      await at(0.45);
      const redisDown = Date.now();
      redisLife.current.end = readResources(redis.pid);
      await redis.stop();
      await new Promise((r) => setTimeout(r, 1000));
      await redis.start();
      redisLife.current = lifeOf('redis-server (restarted)', redis.pid);
      events.push({ what: 'redis-server killed and restarted (counts lost)', from: redisDown, until: Date.now(), kind: 'redis' });
      log('redis restarted');

      await at(0.65);
      // A replica cannot start without its database (migrations, recovery): the cut waits for the restart.
      await restarted;
      const cutAt = Date.now();
      pgProxy.cut('blackhole');
      log('postgres cut off');
      await new Promise((r) => setTimeout(r, Math.max(3000, 0.1 * durationMs)));
      pgProxy.restore();
      events.push({ what: 'PostgreSQL network cut (blackhole), restored', from: cutAt, until: Date.now(), kind: 'postgres' });
      log('postgres restored');
    })();

    await sleepUntil(t0 + durationMs, () => false);
    await faults;
    stopping = true;
    await Promise.all(loops);
    const loadMs = Date.now() - t0;
    log(`load done: ${client.length} requests in ${(loadMs / 1000).toFixed(1)} s`);

    // Every replica's ledger caught up (nothing left in its spool), then the end sample, then a clean stop.
    const behind = await waitForLedgers(replicas);
    clearInterval(sampler);
    const uncheckedAdmits = (await Promise.all(replicas.map((r) => readUncheckedAdmits(r)))).reduce((a, b) => a + b, 0);
    for (const r of replicas) (lives.get(r.name) as ProcessResources).end = readResources(r.pid);
    redisLife.current.end = readResources(redis.pid);
    self.end = readResources(process.pid);
    for (const r of replicas) await r.kill('SIGTERM');
    const spoolLeft = replicas.flatMap((r) =>
      safeList(join(dir, `spool-${r.name}`))
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => `${r.name}/${f}`),
    );

    const ledger = await readLedger(database.url);
    const logs = replicas.map((r) => r.log).join('\n');
    const secrets = [MASTER, UPSTREAM_SECRET, ...keys.map((k) => k.secret)];
    return checkSoak({
      seconds: options.seconds,
      loadMs,
      concurrency: options.concurrency,
      client,
      calls: upstreams.calls as UpstreamCall[],
      ledger,
      keys,
      events,
      resources,
      spoolLeft,
      ledgerBehindAtEnd: behind,
      uncheckedAdmits,
      secretsInLogs: secrets.filter((s) => logs.includes(s)).length,
      t0,
    });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}

function replicaConfig(name: string, c: { keysDb: string; ledger: string; spool: string; redis: string; upstreams: Record<string, string> }): string {
  const provider = (p: string) =>
    `  ${p}: { type: openai, base_url: "${c.upstreams[p]}/${name}/v1", api_key_env: SOAK_UPSTREAM_KEY, exchange_rate: 1.0, timeout_ms: 1000, retry: { attempts: 2, base_ms: 20, cap_ms: 1500 }, breaker: { cooldown_ms: 2000 } }`;
  return `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: SOAK_MASTER, db: "${c.keysDb}" }
billing: { currency: USD, ledger: "${c.ledger}", spool_dir: "${c.spool}", flush_interval_ms: 200 }
limits: { redis: { url: "${c.redis}", key_prefix: "soak:limits:", timeout_ms: 200, on_error: fail_open } }
cache: { redis: { url: "${c.redis}", key_prefix: "soak:cache:", timeout_ms: 200 } }
providers:
${provider('fa')}
${provider('fb')}
models:
  gpt-4.1:
    price: { input: 1.00, output: 1.00 }
    deployments: [{ provider: fa }, { provider: fb }]
`;
}

/** One client request; every way it can end is recorded, a hang included. */
async function ask(replica: HerdReplica, key: SoakKey, marker: number, stream: boolean): Promise<ClientRequest> {
  const sentAt = Date.now();
  const base = { marker, key: key.name, replica: replica.name, stream, sentAt };
  let status: number | undefined;
  try {
    const res = await fetch(`${replica.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.secret}` },
      body: JSON.stringify({ model: 'gpt-4.1', messages: [{ role: 'user', content: `soak ${marker}` }], max_tokens: MAX_TOKENS, ...(stream ? { stream: true } : {}) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    status = res.status;
    const text = await res.text();
    const done = text.split('data: [DONE]').length - 1;
    const errors = stream ? (text.match(/^data: \{"error"/gm) ?? []).length : 0;
    let errorCode: string | undefined;
    if (res.status !== 200) errorCode = (JSON.parse(text) as { error?: { code?: string; type?: string } }).error?.code ?? undefined;
    const complete = res.status === 200 && (stream ? done === 1 && errors === 0 : text.includes('"choices"'));
    return { ...base, endedAt: Date.now(), outcome: 'answered', status: res.status, complete, terminals: stream ? done + errors : 1, errorCode };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    const outcome = e.name === 'TimeoutError' ? 'hung' : status === undefined && e.cause?.code === 'ECONNREFUSED' ? 'refused-connect' : 'cut';
    return { ...base, endedAt: Date.now(), outcome, status, complete: false, terminals: 0, errorCode: e.cause?.code ?? e.name };
  }
}

/** A deterministic choice in [0, n) for (marker, salt): keys, replicas and stream/JSON independent of the fault mode. */
export function pick(marker: number, salt: number, n: number): number {
  let h = (marker * 0x9e3779b1 + salt * 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b) >>> 0;
  h = (h ^ (h >>> 13)) >>> 0;
  return h % n;
}

export async function sleepUntil(when: number, stop: () => boolean): Promise<void> {
  while (Date.now() < when && !stop()) await new Promise((r) => setTimeout(r, Math.min(100, when - Date.now())));
}

export async function waitForLedgers(replicas: readonly HerdReplica[]): Promise<number> {
  let behind = 0;
  for (let i = 0; i < 600; i++) {
    behind = 0;
    for (const r of replicas) {
      try {
        const h = (await (await fetch(`${r.url}/health`)).json()) as { ledger?: { behind_rows: number } };
        behind += h.ledger?.behind_rows ?? 0;
      } catch {
        behind += 1;
      }
    }
    if (behind === 0) return 0;
    await new Promise((r) => setTimeout(r, 100));
  }
  return behind;
}

/** Requests a replica let through unchecked while it could not reach Redis (fail_open), from its metrics. */
async function readUncheckedAdmits(replica: HerdReplica): Promise<number> {
  try {
    const text = await (await fetch(`${replica.metricsUrl}/metrics`)).text();
    return Number(/^herd_gateway_limit_store_unavailable_total\{mode="fail_open"\} (\d+)/m.exec(text)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export async function createDatabase(url: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `herd_soak_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const own = new URL(url);
  own.pathname = `/${name}`;
  return {
    url: own.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

export async function readLedger(url: string): Promise<SoakLedger> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const requests = (
      await c.query(
        'SELECT request_id, key_id, status, prompt_tokens::int AS prompt_tokens, completion_tokens::int AS completion_tokens, estimated::int AS estimated, cost_micros::bigint AS cost_micros, started_at::bigint AS started_at, attempts::int AS attempts FROM ledger_requests',
      )
    ).rows.map((r) => ({ ...r, cost_micros: Number(r.cost_micros), started_at: Number(r.started_at) }));
    const attempts = (await c.query('SELECT request_id, attempt::int AS attempt, provider, outcome, http_status FROM ledger_attempts_all')).rows;
    const reservations = (
      await c.query('SELECT request_id, key_id, state, estimate_micros::bigint AS estimate_micros, actual_micros::bigint AS actual_micros FROM ledger_reservations')
    ).rows.map((r) => ({ ...r, estimate_micros: Number(r.estimate_micros), actual_micros: r.actual_micros === null ? null : Number(r.actual_micros) }));
    const spend = (await c.query("SELECT key_id, period, micros::bigint AS micros FROM ledger_spend WHERE period LIKE 'd:%'")).rows.map((r) => ({
      key_id: r.key_id as string,
      period: r.period as string,
      micros: Number(r.micros),
    }));
    return { requests, attempts, reservations, spend } as SoakLedger;
  } finally {
    await c.end();
  }
}
