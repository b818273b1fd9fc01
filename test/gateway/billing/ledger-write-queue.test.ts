// The write queue on its own: group commit per event-loop turn (and per in-flight write), one batch per
// transaction bounded by maxBatchRows, push() settling when its rows commit, failed writes kept in order
// and retried, and the memory bound while failing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { LedgerWriteQueue, type LedgerEntry } from '../../../src/gateway/billing/ledger-write-queue.ts';
import { sampleAttempt, sampleRequest } from './ledger-contract.ts';

const entry = (id: string, attempts = 0) =>
  [sampleRequest({ requestId: id }), Array.from({ length: attempts }, (_, i) => sampleAttempt({ requestId: id, attempt: i + 1 }))] as const;

test('rows pushed in one turn commit together in the next, and push() resolves once they have', async () => {
  const batches: string[][] = [];
  const queue = new LedgerWriteQueue({
    write: (b) => {
      batches.push(b.map((e) => e.request.requestId));
    },
    flushIntervalMs: 60_000,
    maxBatchRows: 100,
  });
  const a = queue.push(...entry('a', 1));
  const b = queue.push(...entry('b'));
  assert.deepEqual(batches, [], 'push() itself never writes');
  await Promise.all([a, b]);
  assert.deepEqual(batches, [['a', 'b']]);
  assert.deepEqual(queue.stats(), { queued: 0, written: 3, flushes: 1, failedFlushes: 0, dropped: 0, behindRows: 0, behindMs: 0 });
  await queue.close();
});

test('while an asynchronous write is in flight, what arrives joins the next batch; batches never overlap', async () => {
  const batches: string[][] = [];
  let inFlight = 0;
  let overlapped = false;
  let started!: () => void;
  const firstStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  const queue = new LedgerWriteQueue({
    write: async (b) => {
      started();
      if (++inFlight > 1) overlapped = true;
      batches.push(b.map((e) => e.request.requestId));
      await sleep(20);
      inFlight--;
    },
    flushIntervalMs: 60_000,
    maxBatchRows: 100,
  });
  const first = queue.push(...entry('a'));
  await firstStarted; // the write of ['a'] is in flight
  const later = [queue.push(...entry('b')), queue.push(...entry('c'))];
  await first;
  await Promise.all(later);
  assert.deepEqual(batches, [['a'], ['b', 'c']]);
  assert.equal(overlapped, false);
  await queue.close();
});

test('batches never exceed maxBatchRows, and a request stays with its attempts', async () => {
  const batches: LedgerEntry[][] = [];
  const queue = new LedgerWriteQueue({
    write: async (b) => {
      batches.push([...b]);
    },
    flushIntervalMs: 60_000,
    maxBatchRows: 4,
  });
  for (const id of ['c', 'd', 'e']) void queue.push(...entry(id, 2));
  await queue.flush();
  assert.deepEqual(
    batches.map((b) => b.map((e) => e.request.requestId)),
    [['c'], ['d'], ['e']],
  );
  await queue.close();
});

test('a failed write rejects its pushes once, keeps the rows in order and retries them; the bound drops the oldest while failing', async () => {
  let fail = true;
  const written: string[] = [];
  const errors: unknown[] = [];
  const queue = new LedgerWriteQueue({
    write: async (b) => {
      if (fail) throw new Error('disk full');
      written.push(...b.map((e) => e.request.requestId));
    },
    flushIntervalMs: 20,
    maxBatchRows: 100,
    maxQueuedRows: 3,
    onError: (e) => errors.push(e),
  });
  const a = queue.push(...entry('a'));
  void queue.push(...entry('b'));
  await assert.rejects(a, /disk full/);
  assert.equal(errors.length, 1);
  void queue.push(...entry('c'));
  const d = queue.push(...entry('d'));
  const { behindMs, ...stats } = queue.stats();
  assert.deepEqual(stats, { queued: 3, written: 0, flushes: 0, failedFlushes: 1, dropped: 1, behindRows: 3 });
  assert.ok(behindMs >= 0);
  fail = false;
  const alive = setTimeout(() => undefined, 5_000); // the retry timer is unref'd: something must keep the test running
  await d; // the retry, not a flush, wrote it
  clearTimeout(alive);
  assert.deepEqual(written, ['b', 'c', 'd']);
  await queue.close();
});
