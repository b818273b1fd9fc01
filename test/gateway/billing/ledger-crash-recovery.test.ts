// A process killed (SIGKILL) between reserve and settle: after a restart a reservation whose request
// row committed (the answer went out) is settled at the row's cost at once; one without a row is
// still held, and recover() releases it once it is older than the limit (not before: another replica
// may still be serving it); a late settlement charges exactly once; committed rows survive the kill.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openLedger } from '../../../src/gateway/billing/open-ledger.ts';
import { DATABASE_URL, dropSchema, skipWithoutPostgres, uniqueSchema } from './pg-test-schema.ts';
import { dayMonthLines } from './budget-fixtures.ts';

const CHILD = join(import.meta.dirname, 'fixtures', 'reserve-then-hang.ts');
const HOUR = 3_600_000;

async function runAndKill(location: string, schema: string, keyId: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, location, schema, keyId], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('reserved')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before reserving: ${stderr}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
}

async function crashAndRecover(t: TestContext, location: string, schema: string): Promise<void> {
  const keyId = 'key_crash';
  await runAndKill(location, schema, keyId);
  const options = schema === '-' ? {} : { schema };

  // Restart, right away: the reservation is held, and too young to be called abandoned.
  let now = Date.now();
  const ledger = await openLedger(location, { ...options, now: () => now });
  t.after(() => ledger.close());
  assert.deepEqual(await ledger.spend(keyId), { dayMicros: 10_200, monthMicros: 10_200 }, '1 200 settled + 4 000 + 5 000 held');
  assert.deepEqual(await ledger.recover({ olderThanMs: HOUR }), { released: 0, releasedMicros: 0, settled: 1, settledMicros: 700 }, 'the answered one is settled from its row');
  assert.deepEqual(await ledger.spend(keyId), { dayMicros: 6_900, monthMicros: 6_900 }, '1 200 + 700 settled + 5 000 held');

  // An hour and a bit later, the start-up rule releases it: nothing is charged for an answer never delivered.
  now += HOUR + 60_000;
  assert.deepEqual(await ledger.recover({ olderThanMs: HOUR }), { released: 1, releasedMicros: 5_000, settled: 0, settledMicros: 0 });
  assert.deepEqual(await ledger.recover({ olderThanMs: HOUR }), { released: 0, releasedMicros: 0, settled: 0, settledMicros: 0 }, 'a second start-up changes nothing more');
  const spentAt = Date.now();
  assert.deepEqual(await ledger.spend(keyId, spentAt), { dayMicros: 1_900, monthMicros: 1_900 }, 'no lost and no double charge');

  // A client retry of the same request id is answered from the record: no second hold.
  const retry = await ledger.reserve({ keyId, requestId: 'crash-1', estimateMicros: 5_000, lines: dayMonthLines(keyId, {}, Date.now()) });
  assert.deepEqual([retry.created, retry.state], [false, 'released']);
  // Had the request really finished elsewhere, its late settlement counts, once.
  assert.equal((await ledger.settle('crash-1', { costMicros: 3_100 })).changed, true);
  assert.equal((await ledger.settle('crash-1', { costMicros: 3_100 })).changed, false);
  assert.equal((await ledger.release('crash-1')).changed, false);
  assert.deepEqual(await ledger.spend(keyId, spentAt), { dayMicros: 5_000, monthMicros: 5_000 });
  // Both committed rows survived the kill, once each.
  const rows = await ledger.usage({ sinceMs: 0, untilMs: now + HOUR, by: 'key' });
  assert.deepEqual(
    rows.map((r) => [r.group, r.requests, r.costMicros]),
    [[keyId, 2, 1_900]],
  );
}

test('SQLite: killed between reserve and settle, restarted, recovered', async (t) => {
  await crashAndRecover(t, `sqlite:${join(mkdtempSync(join(tmpdir(), 'herd-crash-')), 'herd.db')}`, '-');
});

test('PostgreSQL: killed between reserve and settle, restarted, recovered', { skip: skipWithoutPostgres('ledger-crash-recovery.test.ts (PostgreSQL case)') }, async (t) => {
  const schema = uniqueSchema('herd_crash_test');
  t.after(() => dropSchema(schema));
  await crashAndRecover(t, DATABASE_URL as string, schema);
});
