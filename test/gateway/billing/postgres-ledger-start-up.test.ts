// A spooled PostgreSQL ledger opened while its database cannot be reached: it opens anyway, serves from the
// spool, and runs its start-up (migrations, the dead process's spool, interrupted intents) once the
// database answers; plus the retry loop and the operator's messages on their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { HerdError } from '../../../src/core/errors.ts';
import { SchemaNewerError } from '../../../src/gateway/storage/apply-postgres-migrations.ts';
import { describePostgresFailure, describePostgresUrl } from '../../../src/gateway/storage/describe-postgres-failure.ts';
import { LedgerSpool } from '../../../src/gateway/billing/ledger-spool.ts';
import { PostgresLedger } from '../../../src/gateway/billing/postgres-ledger.ts';
import { RetryUntilReady } from '../../../src/gateway/billing/retry-until-ready.ts';
import { startTcpFaultProxy, targetOf, throughProxy } from '../../helpers/tcp-fault-proxy.ts';
import { sampleRequest } from './ledger-contract.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';
import { dayMonthLines } from './budget-fixtures.ts';

const skip = skipWithoutPostgres('postgres-ledger-start-up.test.ts');
const FAST = { baseMs: 10, capMs: 40 };

async function until(what: string, probe: () => boolean | Promise<boolean>, tries = 300): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`gave up waiting: ${what}`);
}

test('RetryUntilReady: attempts until the step succeeds, with growing waits, and says so once', async () => {
  let calls = 0;
  const failures: { attempt: number; wait: number }[] = [];
  let readyAfter = 0;
  const retry = new RetryUntilReady({
    step: async () => {
      calls++;
      if (calls < 4) throw new Error(`down ${calls}`);
    },
    backoff: { baseMs: 4, capMs: 16 },
    onFailure: (_err, attempt, wait) => failures.push({ attempt, wait }),
    onReady: (attempts) => {
      readyAfter = attempts;
    },
    random: () => 0.99,
  });
  assert.equal(await retry.attempt(), false);
  assert.match(String(retry.lastError), /down 1/);
  retry.retryInBackground();
  // Its timer does not hold the process open (a server's sockets do): this test must.
  const hold = setInterval(() => undefined, 1000);
  await retry.ready;
  clearInterval(hold);
  await new Promise((r) => setImmediate(r));
  assert.equal(retry.isReady, true);
  assert.equal(retry.lastError, undefined);
  assert.equal(readyAfter, 4);
  assert.deepEqual(
    failures.map((f) => f.attempt),
    [1, 2, 3],
  );
  assert.deepEqual(
    failures.map((f) => f.wait),
    [3, 7, 15],
    'the ceiling doubles up to its cap',
  );
});

test('RetryUntilReady: stop() ends the loop', async () => {
  let calls = 0;
  const retry = new RetryUntilReady({
    step: async () => {
      calls++;
      throw new Error('down');
    },
    backoff: { baseMs: 5, capMs: 5 },
  });
  await retry.attempt();
  retry.retryInBackground();
  retry.stop();
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(calls, 1);
  assert.equal(retry.isReady, false);
});

test('describePostgresUrl leaves the password out and refuses a malformed URL without echoing it', () => {
  assert.equal(describePostgresUrl('postgres://herd:s3cret@db.internal:5432/herd?sslmode=require'), 'postgres://herd@db.internal:5432/herd');
  assert.equal(describePostgresUrl('postgresql://[::1]/herd'), 'postgres://[::1]:5432/herd');
  assert.equal(describePostgresUrl('postgres://herd@/herd?host=/var/run/postgresql'), 'postgres://herd@/var/run/postgresql:5432/herd', 'a socket folder, as pg reads it');
  assert.throws(
    () => describePostgresUrl('postgres://herd:s3cret@db.internal:99999/herd'),
    (err: HerdError) => err.code === 'INVALID_ARG' && err.param === 'billing.ledger' && !err.message.includes('s3cret'),
  );
});

test('describePostgresFailure: a refusal the server meant (password, missing database) needs an operator; a network failure does not', () => {
  const coded = (code: string, message: string) => Object.assign(new Error(message), { code });
  const wrapped = (cause: Error) => new HerdError('UNAVAILABLE', `cannot open the PostgreSQL ledger: ${cause.message}`, { cause });
  assert.deepEqual(describePostgresFailure(wrapped(coded('28P01', 'password authentication failed for user "herd"'))), {
    reason: 'the password was refused: password authentication failed for user "herd"',
    needsOperator: true,
  });
  assert.equal(describePostgresFailure(wrapped(coded('3D000', 'database "x" does not exist'))).needsOperator, true);
  assert.deepEqual(describePostgresFailure(wrapped(coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'))), {
    reason: 'connect ECONNREFUSED 127.0.0.1:5432',
    needsOperator: false,
  });
  // A schema newer than this Herd is known by its kind, not by its words.
  const newer = new SchemaNewerError('ledger', 9, 4);
  assert.deepEqual(describePostgresFailure(newer), { reason: newer.message, needsOperator: true });
  assert.equal(describePostgresFailure(new HerdError('UNAVAILABLE', 'a message that says newer than this Herd')).needsOperator, false);
});

test('a malformed URL refuses to open even with a spool (a config error, not an outage)', async () => {
  const spoolDir = mkdtempSync(join(tmpdir(), 'herd-pg-badurl-'));
  await assert.rejects(
    PostgresLedger.open({ url: 'postgres://herd:s3cret@db:notaport/herd', spoolDir }),
    (err: HerdError) => err.code === 'INVALID_ARG' && !err.message.includes('s3cret'),
  );
});

test('opened while the database refuses: serves from the spool, budgets answer UNAVAILABLE, and the start-up runs when it answers (the dead spool first)', { skip }, async (t) => {
  const schema = uniqueSchema('herd_ledger_startdown');
  t.after(() => dropSchema(schema));
  const proxy = await startTcpFaultProxy(targetOf(DATABASE_URL as string, 5432));
  t.after(() => proxy.close());
  proxy.cut('refuse');
  const spoolDir = mkdtempSync(join(tmpdir(), 'herd-pg-startdown-'));
  // A process that died with a row and a call in flight, before it reached the database.
  const dead = LedgerSpool.open(spoolDir).spool;
  dead.append([{ request: sampleRequest({ requestId: 'dead-1' }), attempts: [] }]);
  dead.intend({ requestId: 'dead-2', attempt: 1, keyId: 'key_a', requestedModel: 'gpt4', model: 'gpt4', provider: 'openai', upstreamModel: 'gpt-4', startedAt: 1 });
  writeFileSync(join(spoolDir, 'owner.pid'), '999999999\n');

  const lines: string[] = [];
  const ledger = await PostgresLedger.open({
    url: throughProxy(DATABASE_URL as string, proxy),
    schema,
    spoolDir,
    flushIntervalMs: 20,
    connectTimeoutMs: 300,
    queryTimeoutMs: 300,
    startUpBackoff: FAST,
    recover: { olderThanMs: 3_600_000 },
    log: (line) => lines.push(line),
  });
  t.after(() => ledger.close());
  assert.match(lines[0] ?? '', /^PostgreSQL ledger postgres:\/\/\S+ is unreachable \(.*ECONNRE.*\); serving anyway: rows spool to /);
  assert.match(ledger.stats().waitingForDatabase ?? '', /ECONNRE/);
  assert.equal(ledger.stats().behindRows, 1, "the dead process's row counts as behind");
  await assert.rejects(
    ledger.reserve({ keyId: 'key_a', requestId: 'r-b', estimateMicros: 1, lines: dayMonthLines('key_a', { dayMicros: 100 }, Date.now()) }),
    (e: HerdError) => e.code === 'UNAVAILABLE',
  );
  await assert.rejects(ledger.spend('key_a'), (e: HerdError) => e.code === 'UNAVAILABLE');
  // Durable once spooled, though the database has never answered.
  await ledger.record(sampleRequest({ requestId: 'live-1' }), []);
  await ledger.record(sampleRequest({ requestId: 'live-2' }), []);
  assert.equal(ledger.stats().behindRows, 3);
  assert.equal(ledger.stats().failedFlushes, 0, 'batches wait for the start-up instead of failing');

  proxy.restore();
  await until('caught up', () => ledger.stats().waitingForDatabase === undefined && ledger.stats().behindRows === 0);
  assert.match(lines.at(-1) ?? '', /reached after \d+ attempts/);
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ request_id: string; status: string }>(
      `SELECT request_id, status FROM "${schema}".ledger_requests ORDER BY xmin::text::bigint, request_id`,
    );
    assert.deepEqual(
      rows.map((r) => `${r.request_id}:${r.status}`),
      ['dead-1:ok', 'dead-2:interrupted', 'live-1:ok', 'live-2:ok'],
      'the dead spool first, then what this process answered',
    );
  } finally {
    await client.end();
  }
  assert.deepEqual(await ledger.spend('key_a'), { dayMicros: 0, monthMicros: 0 }, 'budgets answer again');
});

test('a database that does not exist: opens with the spool, and the log says it will not pass by itself; close keeps the rows for the next start', { skip }, async () => {
  const url = new URL(DATABASE_URL as string);
  url.pathname = '/herd_no_such_database';
  url.password = 'hunter2-secret';
  const spoolDir = mkdtempSync(join(tmpdir(), 'herd-pg-nodb-'));
  const lines: string[] = [];
  const ledger = await PostgresLedger.open({ url: url.toString(), spoolDir, startUpBackoff: FAST, log: (line) => lines.push(line) });
  await ledger.record(sampleRequest({ requestId: 'kept' }), []);
  await ledger.close();
  const log = lines.join('\n');
  assert.match(log, /the database does not exist/);
  assert.match(log, /will not pass by itself/);
  assert.match(log, /1 rows stay in the spool for the next start/);
  assert.ok(!log.includes('hunter2'));
  const next = LedgerSpool.open(spoolDir);
  assert.deepEqual(
    next.leftovers.map((e) => e.request.requestId),
    ['kept'],
  );
  next.spool.close();
});

test('opened while the network to the database is gone (no reset): the start waits one connect timeout, not more, and catches up once it returns', { skip }, async (t) => {
  const schema = uniqueSchema('herd_ledger_blackhole');
  t.after(() => dropSchema(schema));
  const proxy = await startTcpFaultProxy(targetOf(DATABASE_URL as string, 5432));
  t.after(() => proxy.close());
  proxy.cut('blackhole');
  const spoolDir = mkdtempSync(join(tmpdir(), 'herd-pg-blackhole-'));
  const started = Date.now();
  const ledger = await PostgresLedger.open({
    url: throughProxy(DATABASE_URL as string, proxy),
    schema,
    spoolDir,
    flushIntervalMs: 20,
    connectTimeoutMs: 300,
    queryTimeoutMs: 300,
    startUpBackoff: FAST,
  });
  t.after(() => ledger.close());
  assert.ok(Date.now() - started < 2000, `opened in ${Date.now() - started} ms`);
  assert.match(ledger.stats().waitingForDatabase ?? '', /timeout/i);
  await ledger.record(sampleRequest({ requestId: 'b-1' }), []);
  proxy.restore();
  await until('caught up', () => ledger.stats().waitingForDatabase === undefined && ledger.stats().behindRows === 0);
  await ledger.flush();
  assert.deepEqual(await ledger.spend('key_a'), { dayMicros: 0, monthMicros: 0 });
});
