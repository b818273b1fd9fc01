// Store level: replica A (this process) changes a key; replica B (test/gateway/keys/fixtures/key-store-replica.ts,
// its own process and pool on the same PostgreSQL schema) reports when its in-memory lookup first showed it.
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { ChangeContext } from '../../src/gateway/keys/key-store.ts';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';
import { dropSchema, uniqueSchema } from '../../test/gateway/billing/pg-test-schema.ts';

const REPLICA = resolve('test/gateway/keys/fixtures/key-store-replica.ts');
const CTX: ChangeContext = { actor: { id: 'cli@bench', name: 'bench', role: 'admin' } };

export const CHANGE_KINDS = ['create', 'rotate', 'block', 'unblock', 'revoke'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** Per change kind: the delays (ms), and how long the change itself took on A (ms). */
export interface Propagation {
  delays: Record<ChangeKind, number[]>;
  answered: Record<ChangeKind, number[]>;
  /** Server level: from the start of A's request to B showing the change (A's answer plus the delay). */
  fromStart: Record<ChangeKind, number[]>;
}

/** Children still running, for the runner's hard time limit to kill. */
export const benchChildren = new Set<ChildProcess>();

export const emptyPropagation = (): Propagation => ({
  delays: { create: [], rotate: [], block: [], unblock: [], revoke: [] },
  answered: { create: [], rotate: [], block: [], unblock: [], revoke: [] },
  fromStart: { create: [], rotate: [], block: [], unblock: [], revoke: [] },
});

/**
 * `rounds` rounds of create → rotate (grace 0) → block → unblock → revoke on one key each. The revoke leaves
 * no live key, so the next round's create is watched as B's hasActiveKeys() turning true (the fixture's
 * only way to see a key whose secret it cannot know beforehand).
 */
export async function measureStorePropagation(url: string, rounds: number): Promise<Propagation> {
  const schema = uniqueSchema('h_kbench_store');
  // A's periodic re-read off (60 s): B must learn of A's changes through LISTEN/NOTIFY, not a timer.
  const a = await openKeyStore(url, { schema, pollMs: 60_000 });
  const child = spawn(process.execPath, ['--import', 'tsx', REPLICA, url, schema], { stdio: ['pipe', 'pipe', 'inherit'] });
  benchChildren.add(child);
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error('replica B (key-store-replica.ts) exited');
    return value as string;
  };
  const result = emptyPropagation();
  try {
    if ((await next()) !== 'ready') throw new Error('replica B did not start');
    const measure = async (kind: ChangeKind, watch: { secret?: string; state: string }, change: () => Promise<unknown>) => {
      child.stdin.write(`${JSON.stringify(watch)}\n`);
      // B reads the command and starts polling before A moves (as in key-store-replicas.test.ts).
      await new Promise((r) => setTimeout(r, 20));
      const started = Date.now();
      await change();
      result.answered[kind].push(Date.now() - started);
      const { seenAt } = JSON.parse(await next()) as { seenAt: number | null };
      if (seenAt === null) throw new Error(`replica B did not see the ${kind} within the fixture's 10 s`);
      result.delays[kind].push(seenAt - started);
    };
    for (let round = 0; round < rounds; round++) {
      let secret = '';
      let id = '';
      await measure('create', { state: 'first key' }, async () => {
        const made = await a.createKey({ name: `bench-${round}` }, CTX);
        secret = made.secret;
        id = made.key.id;
      });
      const old = secret;
      await measure('rotate', { secret: old, state: 'rotated' }, async () => {
        secret = (await a.rotateKey(id, { graceMs: 0 }, CTX)).secret;
      });
      await measure('block', { secret, state: 'blocked' }, () => a.setBlocked(id, true, CTX));
      await measure('unblock', { secret, state: 'active' }, () => a.setBlocked(id, false, CTX));
      await measure('revoke', { secret, state: 'revoked' }, () => a.revokeKey(id, CTX));
    }
  } finally {
    child.stdin.end('exit\n');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(null)));
    benchChildren.delete(child);
    await a.close();
    await dropSchema(schema);
  }
  return result;
}
