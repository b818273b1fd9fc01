// The stack the rolling-restart test runs on: network namespaces (or loopback), a fault-free fake upstream,
// a PostgreSQL database of its own (ledger and keys), the shared Redis under a unique prefix, three keys made
// through the key store, three `herd serve` replicas and HAProxy. Every piece registers its own cleanup.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';
import { targetOf, throughProxy } from '../../test/helpers/tcp-fault-proxy.ts';
import { startFaultUpstreams, type FaultUpstreams } from '../soak/fault-upstream.ts';
import type { SoakKey } from '../soak/soak-checks.ts';
import { createDatabase } from '../soak/soak.ts';
import { freePort, HerdReplica } from '../soak/soak-processes.ts';
import { type Haproxy, startHaproxy } from './haproxy.ts';
import { createTestNetwork, removeStale, type TestNetwork } from './netns.ts';
import type { LoadKey } from './rolling-load.ts';

export interface StackOptions {
  databaseUrl: string;
  redisUrl: string;
  testdata: string;
  replicas: number;
  /** First three octets of the private /24, e.g. 10.213.0. */
  subnet: string;
  loopback: boolean;
  retryOn: string | undefined;
  retries: number;
  rpm: number;
  budgetMicros: number;
  log: (line: string) => void;
}

export interface Stack {
  net: TestNetwork;
  upstream: FaultUpstreams;
  databaseUrl: string;
  redisPrefix: string;
  keys: LoadKey[];
  soakKeys: SoakKey[];
  replicas: HerdReplica[];
  haproxy: Haproxy;
  secrets: string[];
  dir: string;
}

/** Cleanups run last-in first-out, once, on every exit path (the CLI also runs them on SIGINT/SIGTERM). */
export class Cleanups {
  private readonly list: { what: string; run: () => Promise<void> | void }[] = [];
  add(what: string, run: () => Promise<void> | void): void {
    this.list.push({ what, run });
  }
  async runAll(log: (line: string) => void): Promise<void> {
    while (this.list.length > 0) {
      const c = this.list.pop() as { what: string; run: () => Promise<void> | void };
      try {
        await c.run();
      } catch (err) {
        log(`cleanup ${c.what} failed: ${(err as Error).message}`);
      }
    }
  }
}

const MASTER = `sk-herd-rr-master-${randomBytes(12).toString('hex')}`;
const UPSTREAM_SECRET = `sk-upstream-rr-${randomBytes(8).toString('hex')}`;

export async function startStack(o: StackOptions, cleanups: Cleanups): Promise<Stack> {
  const stale = removeStale();
  if (stale.length) o.log(`removed namespaces of an earlier run that died: ${stale.join(', ')}`);
  const net = createTestNetwork(o.replicas, o.subnet, o.loopback);
  cleanups.add('network namespaces', () => net.remove());
  o.log(net.mode === 'netns' ? `namespaces ${net.replicas.map((r) => `${r.ns} ${r.ip}`).join(', ')}; host ${net.hostIp}` : `loopback: ${net.reason}`);
  const dir = mkdtempSync(join(tmpdir(), 'herd-rr-'));
  cleanups.add('temporary folder', () => rmSync(dir, { recursive: true, force: true }));

  const upstream = await startFaultUpstreams(['up'], { hangMs: 0, slowMs: 0, faults: false });
  cleanups.add('fake upstream', () => upstream.close());
  const database = await createDatabase(o.databaseUrl);
  cleanups.add(`database ${new URL(database.url).pathname.slice(1)}`, () => database.drop());
  const redisPrefix = `herd:rr:${process.pid}:${randomBytes(4).toString('hex')}:`;
  cleanups.add('redis keys', () => deleteRedisKeys(o.redisUrl, redisPrefix));

  // Inside a namespace 127.0.0.1 is the namespace's own: PostgreSQL, Redis and the upstream are reached
  // through HAProxy TCP forwards on the host's bridge address (a pod reaches its services through the node).
  const forwards: { name: string; bind: string; target: string }[] = [];
  const reach = async (name: string, url: string, port: number): Promise<string> => {
    if (net.mode === 'loopback') return url;
    const target = targetOf(url, port);
    const fwd = { host: net.hostIp, port: await freePort() };
    forwards.push({ name, bind: `${fwd.host}:${fwd.port}`, target: `${target.host}:${target.port}` });
    return throughProxy(url, fwd);
  };
  const ledgerUrl = await reach('fwd_postgres', database.url, 5432);
  const redisUrl = await reach('fwd_redis', o.redisUrl, 6379);
  const upstreamUrl = (await reach('fwd_upstream', upstream.urls.up as string, 80)).replace(/\/$/, '');

  const store = await openKeyStore(database.url);
  const ctx = { actor: { id: 'cli@rolling-restart', name: 'rolling-restart', role: 'admin' as const } };
  const plain = await store.createKey({ name: 'rr-plain' }, ctx);
  const rpm = await store.createKey({ name: 'rr-rpm', rpm: o.rpm }, ctx);
  const budget = await store.createKey({ name: 'rr-budget', budgets: [{ period: 'day', amountMicros: o.budgetMicros }] }, ctx);
  await store.close();
  const keys: LoadKey[] = [
    { name: 'plain', secret: plain.secret },
    { name: 'rpm', secret: rpm.secret },
    { name: 'budget', secret: budget.secret },
  ];
  const soakKeys: SoakKey[] = [
    { name: 'plain', id: plain.key.id, secret: plain.secret },
    { name: 'rpm', id: rpm.key.id, secret: rpm.secret, rpm: o.rpm },
    { name: 'budget', id: budget.key.id, secret: budget.secret, budgetMicros: o.budgetMicros },
  ];

  const repo = join(dir, 'models');
  mkdirSync(repo);
  symlinkSync(join(o.testdata, 'triton_model_repository', 'simple'), join(repo, 'simple'));
  const servers = [];
  const replicas: HerdReplica[] = [];
  for (const [i, rn] of net.replicas.entries()) {
    const name = `r${i}`;
    const ports = net.mode === 'netns' ? { http: 8000, metrics: 8002 } : { http: await freePort(), metrics: await freePort() };
    const config = join(dir, `herd-${name}.yaml`);
    writeFileSync(config, replicaConfig({ name, host: rn.ip, ports, ledgerUrl, redisUrl, redisPrefix, upstreamUrl, repo, spool: join(dir, `spool-${name}`) }));
    const wrap = net.mode === 'netns' ? ['ip', 'netns', 'exec', rn.ns] : [];
    replicas.push(new HerdReplica(name, config, { RR_MASTER: MASTER, RR_UPSTREAM_KEY: UPSTREAM_SECRET }, wrap));
    servers.push({ name, host: rn.ip, port: ports.http });
  }
  const haproxy = await startHaproxy(dir, { port: await freePort(), servers, retryOn: o.retryOn, retries: o.retries, forwards });
  cleanups.add('haproxy', () => haproxy.stop());
  cleanups.add('replicas', async () => {
    for (const r of replicas) await r.kill('SIGKILL');
  });
  // The first replica migrates the ledger; the others start together after it.
  await (replicas[0] as HerdReplica).start();
  await Promise.all(replicas.slice(1).map((r) => r.start()));
  o.log(`replicas up: ${replicas.map((r) => `${r.name} ${r.url} pid ${r.pid}`).join(', ')}`);

  for (const s of servers) await haproxy.waitFor(s.name, 'UP', 20_000);
  o.log(`haproxy ${haproxy.url} pid ${haproxy.pid}: every server UP`);
  const secrets = [MASTER, UPSTREAM_SECRET, ...keys.map((k) => k.secret)];
  return { net, upstream, databaseUrl: database.url, redisPrefix, keys, soakKeys, replicas, haproxy, secrets, dir };
}

function replicaConfig(c: {
  name: string;
  host: string;
  ports: { http: number; metrics: number };
  ledgerUrl: string;
  redisUrl: string;
  redisPrefix: string;
  upstreamUrl: string;
  repo: string;
  spool: string;
}): string {
  return `server: { host: "${c.host}", http_port: ${c.ports.http}, grpc_port: 0, metrics_port: ${c.ports.metrics} }
serving: { model_repository: ["${c.repo}"] }
auth: { master_key_env: RR_MASTER }
billing: { currency: USD, ledger: "${c.ledgerUrl}", spool_dir: "${c.spool}", flush_interval_ms: 200 }
limits: { redis: { url: "${c.redisUrl}", key_prefix: "${c.redisPrefix}limits:", timeout_ms: 500, on_error: fail_open } }
cache: { redis: { url: "${c.redisUrl}", key_prefix: "${c.redisPrefix}cache:", timeout_ms: 500 } }
providers:
  up: { type: openai, base_url: "${c.upstreamUrl}/${c.name}/v1", api_key_env: RR_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 1.00, output: 1.00 }
    deployments: [{ provider: up }]
`;
}

function deleteRedisKeys(url: string, prefix: string): void {
  const keys = execFileSync('redis-cli', ['-u', url, '--scan', '--pattern', `${prefix}*`])
    .toString()
    .split('\n')
    .filter(Boolean);
  for (let i = 0; i < keys.length; i += 500) execFileSync('redis-cli', ['-u', url, 'del', ...keys.slice(i, i + 500)]);
}
