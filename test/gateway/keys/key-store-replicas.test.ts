// Two key stores on one PostgreSQL database, B in a child process with its own pool: a key created,
// rotated, blocked or revoked on A shows in B's in-memory lookup within a second (LISTEN/NOTIFY; the
// periodic re-read is only the safety net). Prints the measured delays.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { test } from 'node:test';
import { openKeyStore } from '../../../src/gateway/keys/open-key-store.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from '../billing/pg-test-schema.ts';
import { ctx } from './key-store-harness.ts';

const CHILD = join(import.meta.dirname, 'fixtures', 'key-store-replica.ts');

test('a change on replica A reaches replica B (another process) without a restart or a refresh (the delay is measured in bench/keys)', {
  skip: skipWithoutPostgres('key store replicas'),
}, async (t) => {
  const url = DATABASE_URL as string;
  const schema = uniqueSchema('h_store_rep');
  // A first, so the schema exists (migrated once) before B opens it.
  const a = await openKeyStore(url, { schema, pollMs: 60_000 });
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, url, schema], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => {
    const { value, done } = await lines.next();
    if (done) throw new Error('replica B exited');
    return value as string;
  };
  try {
    assert.equal(await next(), 'ready');
    /** Starts B watching, runs the change on A, returns ms from the change's start until B saw it. */
    const measure = async (watch: { secret?: string; state: string }, change: () => Promise<unknown>) => {
      child.stdin.write(`${JSON.stringify(watch)}\n`);
      await new Promise((r) => setTimeout(r, 20));
      const started = Date.now();
      await change();
      const committed = Date.now() - started;
      const { seenAt } = JSON.parse(await next()) as { seenAt: number | null };
      assert.notEqual(seenAt, null, `B never saw ${watch.state}`);
      return { delay: (seenAt as number) - started, committed };
    };
    let secret = '';
    let keyId = '';
    const created = await measure({ state: 'first key' }, async () => {
      const made = await a.createKey({ name: 'replicated' }, ctx);
      secret = made.secret;
      keyId = made.key.id;
    });
    const oldSecret = secret;
    const rotated = await measure({ secret: oldSecret, state: 'rotated' }, async () => {
      secret = (await a.rotateKey(keyId, { graceMs: 0 }, ctx)).secret;
    });
    const blocked = await measure({ secret, state: 'blocked' }, () => a.setBlocked(keyId, true, ctx));
    const revoked = await measure({ secret, state: 'revoked' }, () => a.revokeKey(keyId, ctx));
    const results = { created, rotated, blocked, revoked };
    t.diagnostic(
      `A→B delay, ms from the change's start (of which the commit on A): ${Object.entries(results)
        .map(([k, v]) => `${k} ${v.delay} (${v.committed})`)
        .join(', ')}`,
    );
  } finally {
    child.stdin.end('exit\n');
    await new Promise((r) => child.once('exit', r));
    await a.close();
    await dropSchema(schema);
  }
});

test('a replica whose LISTEN connection was cut reconnects and catches up without a refresh', { skip: skipWithoutPostgres('key store replicas') }, async (t) => {
  const url = DATABASE_URL as string;
  const schema = uniqueSchema('h_store_listen');
  const listeners = async () =>
    new Set((await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE query = 'LISTEN herd_keys' AND datname = current_database()")).rows.map((r) => r.pid));
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const a = await openKeyStore(url, { schema, pollMs: 60_000 });
  const before = await listeners();
  const b = await openKeyStore(url, { schema, pollMs: 60_000 });
  try {
    const mine = [...(await listeners())].filter((pid) => !before.has(pid));
    assert.ok(mine.length >= 1, "B's LISTEN connection is visible");
    for (const pid of mine) await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    const started = Date.now();
    const { secret } = await a.createKey({ name: 'after-the-cut' }, ctx);
    while (b.lookup(secret).state !== 'active' && Date.now() - started < 10_000) await new Promise((r) => setTimeout(r, 5));
    assert.equal(b.lookup(secret).state, 'active', 'B caught up by itself (the 60 s re-read was not due)');
    t.diagnostic(`B saw the change ${Date.now() - started} ms after its LISTEN connection was cut`);
  } finally {
    await a.close();
    await b.close();
    await admin.end();
    await dropSchema(schema);
  }
});
