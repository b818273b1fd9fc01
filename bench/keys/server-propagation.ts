// Server level: two `herd serve` processes on one fresh PostgreSQL database (ledger and keys) and one Redis;
// each change goes through replica A's admin API, and replica B's GET /v1/me is polled with the key every
// 5 ms from the moment A answered until B's status shows the change.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from '../../test/e2e/create-test-database.ts';
import { type HerdProcess, killIfRunning, spawnHerd, stopHerd } from '../../test/e2e/spawn-herd.ts';
import { benchChildren, type ChangeKind, emptyPropagation, type Propagation } from './store-propagation.ts';

const MASTER = 'sk-herd-kbench-master-key-000000000000000000000000';
const POLL_MS = 5;
/** A change B has not shown after this long stops the run (a liveness bound, far above the 1 s target). */
const GIVE_UP_MS = 10_000;

function herdYaml(database: string, redis: string | undefined, prefix: string, spool: string): string {
  // The upstream is never called: /v1/me and the admin API need a gateway, not a reachable provider.
  // Each replica its own ledger spool (a second live process refuses one), in the temporary folder.
  return `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_KBENCH_MASTER }
billing: { ledger: "${database}", spool_dir: ${spool} }
${redis ? `limits: { redis: { url: "${redis}", key_prefix: "${prefix}" } }` : ''}
providers:
  up: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: HERD_KBENCH_UPSTREAM }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: up }]
`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ServerRun {
  propagation: Propagation;
  /** Polls of B per change (the last one showed it). */
  polls: number[];
  redis: boolean;
}

export async function measureServerPropagation(rounds: number, redisUrl: string | undefined): Promise<ServerRun> {
  const database = await createTestDatabase('h_kbench');
  const dir = mkdtempSync(join(tmpdir(), 'herd-kbench-'));
  const prefix = `herd:kbench:${randomUUID()}:`;
  const config = (name: string) => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, herdYaml(database.url, redisUrl, prefix, `${name}.spool`));
    return file;
  };
  const env = { HERD_KBENCH_MASTER: MASTER, HERD_KBENCH_UPSTREAM: 'sk-unused' };
  let a: HerdProcess | undefined;
  let b: HerdProcess | undefined;
  const result: ServerRun = { propagation: emptyPropagation(), polls: [], redis: redisUrl !== undefined };
  try {
    // A first: it migrates the database B then opens.
    a = await spawnHerd(config('a'), env);
    benchChildren.add(a.child);
    b = await spawnHerd(config('b'), env);
    benchChildren.add(b.child);
    const origin = { a: a.url, b: b.url };
    const admin = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${origin.a}${path}`, {
        method,
        headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`replica A: ${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
      return JSON.parse(text) as { secret?: string; key: { id: string } };
    };
    const me = async (secret: string) => {
      const res = await fetch(`${origin.b}/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
      await res.arrayBuffer();
      return res.status;
    };
    /** Runs the change on A, then polls B until `status`; records both times. */
    const measure = async <T>(kind: ChangeKind, change: () => Promise<T>, secretOf: (answer: T) => string, status: number): Promise<T> => {
      const started = performance.now();
      const answer = await change();
      const since = performance.now();
      result.propagation.answered[kind].push(since - started);
      const secret = secretOf(answer);
      for (let polls = 1; ; polls++) {
        const got = await me(secret);
        const elapsed = performance.now() - since;
        if (got === status) {
          result.propagation.delays[kind].push(elapsed);
          result.propagation.fromStart[kind].push(performance.now() - started);
          result.polls.push(polls);
          return answer;
        }
        if (elapsed > GIVE_UP_MS) throw new Error(`replica B still answers ${got} (not ${status}) ${Math.round(elapsed)} ms after the ${kind} on A`);
        await sleep(POLL_MS);
      }
    };
    // Warm both servers' paths (JIT, pools) with one throwaway round, not counted.
    const warm = await admin('POST', '/admin/v1/keys', { name: 'warm-up' });
    for (let i = 0; i < 5; i++) await me(warm.secret as string);
    await admin('DELETE', `/admin/v1/keys/${warm.key.id}`);
    result.polls.length = 0;
    for (let round = 0; round < rounds; round++) {
      const made = await measure(
        'create',
        () => admin('POST', '/admin/v1/keys', { name: `bench-${round}` }),
        (x) => x.secret as string,
        200,
      );
      const id = made.key.id;
      // The new secret: unknown on B (401) until the rotation arrives, then 200.
      const rotated = await measure(
        'rotate',
        () => admin('POST', `/admin/v1/keys/${id}/rotate`, { grace: 0 }),
        (x) => x.secret as string,
        200,
      );
      const secret = rotated.secret as string;
      await measure(
        'block',
        () => admin('POST', `/admin/v1/keys/${id}/block`, {}),
        () => secret,
        403,
      );
      await measure(
        'unblock',
        () => admin('POST', `/admin/v1/keys/${id}/unblock`, {}),
        () => secret,
        200,
      );
      await measure(
        'revoke',
        () => admin('DELETE', `/admin/v1/keys/${id}`),
        () => secret,
        401,
      );
    }
  } finally {
    if (a) await Promise.race([stopHerd(a, 'SIGTERM'), sleep(10_000)]);
    if (b) await Promise.race([stopHerd(b, 'SIGTERM'), sleep(10_000)]);
    killIfRunning(a);
    killIfRunning(b);
    for (const herd of [a, b]) if (herd) benchChildren.delete(herd.child);
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}
