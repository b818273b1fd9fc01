// The spool: appends survive without the database, a torn last line is skipped, files go once their rows
// are written, a second live owner of the folder is refused, and a SQLite ledger replays what a dead
// process left (exactly once) before anything else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LedgerSpool, parseSpoolText } from '../../../src/gateway/billing/ledger-spool.ts';
import { LedgerWriteQueue } from '../../../src/gateway/billing/ledger-write-queue.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { sampleAttempt, sampleRequest } from './ledger-contract.ts';
import { dayMonthLines } from './budget-fixtures.ts';

const jsonl = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.jsonl'));

test('push() resolves on the append; the database gets the rows later, and their file goes once it has them', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-spool-'));
  const { spool, leftovers } = LedgerSpool.open(dir);
  assert.deepEqual(leftovers, []);
  const written: string[] = [];
  const queue = new LedgerWriteQueue({
    write: (b) => {
      written.push(...b.map((e) => e.request.requestId));
    },
    flushIntervalMs: 60_000,
    maxBatchRows: 100,
    spool,
  });
  await Promise.all([queue.push(sampleRequest({ requestId: 'a' }), [sampleAttempt({ requestId: 'a' })]), queue.push(sampleRequest({ requestId: 'b' }), [])]);
  assert.deepEqual(written, [], 'durable before the database saw anything');
  const files = jsonl(dir);
  assert.equal(files.length, 1);
  const seen = parseSpoolText(readFileSync(join(dir, files[0]!), 'utf8'));
  assert.deepEqual(
    seen.map((e) => [e.request.requestId, e.attempts.length]),
    [
      ['a', 1],
      ['b', 0],
    ],
  );
  await queue.flush();
  assert.deepEqual(written, ['a', 'b']);
  await queue.close();
  spool.close();
  assert.deepEqual(jsonl(dir), []);
});

test('a torn last line is skipped; a folder owned by another live process is refused', () => {
  const line = JSON.stringify([sampleRequest({ requestId: 'whole' }), []]);
  assert.deepEqual(
    parseSpoolText(`${line}\n${line.slice(0, 40)}`).map((e) => e.request.requestId),
    ['whole'],
  );
  const dir = mkdtempSync(join(tmpdir(), 'herd-spool-'));
  writeFileSync(join(dir, 'owner.pid'), `${process.ppid}\n`); // our parent: alive, not us
  assert.throws(() => LedgerSpool.open(dir), /belongs to running process/);
});

test("a SQLite ledger replays a dead process's spool exactly once before recover() runs", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-spool-ledger-'));
  const db = join(dir, 'herd.db');
  const spoolDir = `${db}.spool`;
  const first = SqliteLedger.open(db, { spoolDir });
  await first.reserve({ keyId: 'k', requestId: 'r1', estimateMicros: 5_000, lines: dayMonthLines('k', {}, Date.now()) });
  await first.record(sampleRequest({ requestId: 'r1', keyId: 'k', costMicros: 1_000, startedAt: Date.now() }), []);
  // "Killed": nothing flushed, nothing closed. A duplicate line (a write retried across a crash) is harmless.
  const [file] = jsonl(spoolDir);
  appendFileSync(join(spoolDir, file!), `${JSON.stringify([sampleRequest({ requestId: 'r1', keyId: 'k', costMicros: 1_000 }), []])}\n`);
  writeFileSync(join(spoolDir, 'owner.pid'), '999999999\n'); // the dead owner
  const second = SqliteLedger.open(db, { spoolDir });
  try {
    assert.deepEqual(await second.recover({ olderThanMs: 3_600_000 }), { released: 0, releasedMicros: 0, settled: 1, settledMicros: 1_000 });
    const rows = await second.usage({ sinceMs: 0, by: 'key' });
    assert.deepEqual(
      rows.map((r) => [r.group, r.requests, r.costMicros]),
      [['k', 1, 1_000]],
    );
    assert.deepEqual(await second.spend('k'), { dayMicros: 1_000, monthMicros: 1_000 });
    assert.deepEqual(jsonl(spoolDir), [], 'replayed files are gone');
  } finally {
    await second.close();
  }
});
