// The write queue on its own: flush by time and by size, one batch per transaction bounded by
// maxBatchRows, failed writes kept in order for the next try, and the memory bound while failing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { LedgerWriteQueue, type LedgerEntry } from '../../../src/gateway/billing/ledger-write-queue.ts';
import { sampleAttempt, sampleRequest } from './ledger-contract.ts';

const entry = (id: string, attempts = 0) => [sampleRequest({ requestId: id }), Array.from({ length: attempts }, (_, i) => sampleAttempt({ requestId: id, attempt: i + 1 }))] as const;

test('rows wait for the interval, then go in one batch', async () => {
  const batches: string[][] = [];
  const queue = new LedgerWriteQueue({ write: async (b) => { batches.push(b.map((e) => e.request.requestId)); }, flushIntervalMs: 30, maxBatchRows: 100 });
  queue.push(...entry('a', 1));
  queue.push(...entry('b'));
  await sleep(5);
  assert.deepEqual(batches, [], 'nothing before the interval');
  await sleep(60);
  assert.deepEqual(batches, [['a', 'b']]);
  assert.deepEqual(queue.stats(), { queued: 0, written: 3, flushes: 1, failedFlushes: 0, dropped: 0 });
  await queue.close();
});

test('a full batch is written at once (next turn of the event loop), and batches never exceed maxBatchRows', async () => {
  const batches: LedgerEntry[][] = [];
  const queue = new LedgerWriteQueue({ write: async (b) => { batches.push([...b]); }, flushIntervalMs: 60_000, maxBatchRows: 4 });
  queue.push(...entry('a', 1));
  queue.push(...entry('b', 1));
  assert.equal(batches.length, 0, 'record() itself never writes');
  await sleep(1);
  assert.deepEqual(batches.map((b) => b.map((e) => e.request.requestId)), [['a', 'b']]);
  for (const id of ['c', 'd', 'e']) queue.push(...entry(id, 2));
  await queue.flush();
  assert.deepEqual(batches.slice(1).map((b) => b.map((e) => e.request.requestId)), [['c'], ['d'], ['e']], 'a request and its attempts stay together');
  await queue.close();
});

test('a failed write keeps its rows, in order, for the next flush; the bound drops the oldest while failing', async () => {
  let fail = true;
  const written: string[] = [];
  const errors: unknown[] = [];
  const queue = new LedgerWriteQueue({
    write: async (b) => {
      if (fail) throw new Error('disk full');
      written.push(...b.map((e) => e.request.requestId));
    },
    flushIntervalMs: 60_000, maxBatchRows: 100, maxQueuedRows: 3, onError: (e) => errors.push(e),
  });
  queue.push(...entry('a'));
  queue.push(...entry('b'));
  await assert.rejects(queue.flush(), /disk full/);
  queue.push(...entry('c'));
  queue.push(...entry('d'));
  assert.deepEqual(queue.stats(), { queued: 3, written: 0, flushes: 0, failedFlushes: 1, dropped: 1 });
  fail = false;
  await queue.close();
  assert.deepEqual(written, ['b', 'c', 'd']);
});
