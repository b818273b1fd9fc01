// The priority queue in front of a concurrency limit, driven by a ManualClock: class order with
// FIFO inside a class, aging that bounds a BATCH request's wait under a continuous HIGH stream,
// queue timeouts and a full queue answered UNAVAILABLE with Retry-After, aborts, and the stats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { ManualClock } from '../../../src/core/clock.ts';
import { HerdError } from '../../../src/core/errors.ts';
import { MemoryLimitStore } from '../../../src/gateway/limits/memory-limit-store.ts';
import { PriorityGate, type GatePass, type PriorityGateOptions } from '../../../src/gateway/limits/priority-gate.ts';
import type { Priority } from '../../../src/gateway/limits/priority.ts';

/** Lets every pending promise callback run (the memory store answers in microtasks). */
const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

function setup(options: Partial<PriorityGateOptions> & { concurrency?: number } = {}) {
  const clock = new ManualClock();
  const gate = new PriorityGate({
    subject: 'upstream model holysheep/gpt-4.1',
    group: 'model:holysheep/gpt-4.1',
    checks: [{ kind: 'lease', name: 'concurrency', limit: options.concurrency ?? 1, leaseMs: 30_000 }],
    store: new MemoryLimitStore(clock),
    clock,
    agingMs: 1000,
    maxQueue: 100,
    queueTimeoutMs: 60_000,
    pollMs: 50,
    ...options,
  });
  const admitted: { name: string; at: number; pass: GatePass }[] = [];
  const failed: { name: string; error: unknown }[] = [];
  const enter = (name: string, priority: Priority, extra: { signal?: AbortSignal; maxWaitMs?: number } = {}) => {
    // One signal per request, as the gateway passes them: a signal shared by more than ten queued
    // waiters trips Node's leak warning even though each wait removes its listener when it ends.
    gate.acquire({ priority, signal: extra.signal ?? new AbortController().signal, maxWaitMs: extra.maxWaitMs ?? 600_000 }).then(
      (pass) => {
        admitted.push({ name, at: clock.now(), pass });
      },
      (error: unknown) => {
        failed.push({ name, error });
      },
    );
  };
  /** Releases the longest-held slot. */
  const finishOldest = () => {
    const holder = admitted.find((a) => !released.has(a));
    assert.ok(holder, 'someone holds a slot');
    released.add(holder);
    holder.pass.release();
  };
  const released = new Set<(typeof admitted)[number]>();
  return { clock, gate, admitted, failed, enter, finishOldest };
}

test('HIGH before NORMAL before BATCH, first come first served within a class', async () => {
  const { gate, admitted, enter, finishOldest } = setup({ agingMs: 1_000_000 });
  enter('running', 'NORMAL');
  await flush();
  for (const [name, p] of [
    ['b1', 'BATCH'],
    ['n1', 'NORMAL'],
    ['h1', 'HIGH'],
    ['n2', 'NORMAL'],
    ['b2', 'BATCH'],
    ['h2', 'HIGH'],
  ] as const)
    enter(name, p);
  await flush();
  assert.equal(gate.depth, 6);
  for (let i = 0; i < 6; i++) {
    finishOldest();
    await flush();
  }
  assert.deepEqual(
    admitted.map((a) => a.name),
    ['running', 'h1', 'h2', 'n1', 'n2', 'b1', 'b2'],
  );
});

/** One slot, 100 ms per request, a HIGH request arriving every 100 ms on top of a backlog of 5. */
async function batchUnderHighStream(agingMs: number, horizonMs: number): Promise<number | undefined> {
  const { clock, admitted, enter, finishOldest } = setup({ agingMs, maxQueue: 1000, queueTimeoutMs: 3_600_000 });
  enter('h-running', 'HIGH');
  for (let i = 0; i < 5; i++) enter(`h-backlog-${i}`, 'HIGH');
  enter('batch', 'BATCH');
  await flush();
  for (let t = 100; t <= horizonMs; t += 100) {
    clock.advance(100);
    finishOldest();
    enter(`h-${t}`, 'HIGH');
    await flush();
    const batch = admitted.find((a) => a.name === 'batch');
    if (batch) return batch.at;
  }
  return undefined;
}

test('aging: a BATCH request is served within 2 × aging_ms + the backlog ahead of it, under a continuous HIGH stream', async () => {
  const agingMs = 1000;
  const servedAt = await batchUnderHighStream(agingMs, 10_000);
  assert.ok(servedAt !== undefined, 'BATCH was served');
  // It ranks like a HIGH arriving 2 × aging_ms after it: every HIGH from before then goes first,
  // none from after. With the backlog of 5 (plus the one arriving with it) that is 2000 + 600 ms.
  assert.ok(servedAt >= 2 * agingMs, `not before its aging: ${servedAt}`);
  assert.ok(servedAt <= 2 * agingMs + 6 * 100, `bounded: served at ${servedAt} ms`);
  // Without aging the same stream starves it for as long as the stream lasts.
  assert.equal(await batchUnderHighStream(1e9, 10_000), undefined);
});

test("a queue timeout answers UNAVAILABLE with a Retry-After; the request's own budget can be shorter", async () => {
  const { clock, gate, failed, enter, finishOldest, admitted } = setup({ queueTimeoutMs: 5000 });
  enter('running', 'HIGH');
  await flush();
  clock.advance(3000);
  finishOldest();
  enter('holder', 'HIGH');
  await flush();
  enter('patient', 'NORMAL');
  enter('hurried', 'NORMAL', { maxWaitMs: 1000 });
  await flush();
  clock.advance(1000);
  await flush();
  assert.deepEqual(
    failed.map((f) => f.name),
    ['hurried'],
  );
  const err = failed[0]!.error;
  assert.ok(err instanceof HerdError);
  assert.equal(err.code, 'UNAVAILABLE');
  assert.equal(err.message, 'upstream model holysheep/gpt-4.1 is busy: no slot was free within 1000 ms.');
  // Slots were held 3 s on average; one waiter ahead plus this one on 1 slot: about 6 s.
  assert.equal(err.retryAfterSeconds, 6);
  clock.advance(4000);
  await flush();
  assert.deepEqual(
    failed.map((f) => f.name),
    ['hurried', 'patient'],
  );
  assert.match(String(failed[1]!.error), /no slot was free within 5000 ms/);
  assert.equal(gate.depth, 0);
  assert.equal(admitted.length, 2);
  assert.deepEqual(gate.stats().rejected, { timeout: 2, full: 0, evicted: 0, too_late: 0 });
});

test('a full queue sheds its lowest-ranked waiter for a higher newcomer, and refuses a lower one', async () => {
  const { failed, enter, admitted, finishOldest } = setup({ maxQueue: 2, agingMs: 1_000_000 });
  enter('running', 'NORMAL');
  await flush();
  enter('b1', 'BATCH');
  enter('b2', 'BATCH');
  enter('h1', 'HIGH'); // evicts b2, the last in rank
  enter('b3', 'BATCH'); // ranks below both waiters: refused
  await flush();
  assert.deepEqual(
    failed.map((f) => f.name),
    ['b2', 'b3'],
  );
  assert.match(String(failed[0]!.error), /a request of higher priority took this one's place in its full queue \(2 waiting\)/);
  assert.match(String(failed[1]!.error), /its queue is full \(2 waiting\)/);
  assert.ok(failed.every((f) => f.error instanceof HerdError && f.error.code === 'UNAVAILABLE' && f.error.retryAfterSeconds! >= 1));
  finishOldest();
  await flush();
  finishOldest();
  await flush();
  assert.deepEqual(
    admitted.map((a) => a.name),
    ['running', 'h1', 'b1'],
  );
});

test("an abort leaves the queue with the signal's reason; the slot goes to the next waiter", async () => {
  const { gate, failed, enter, admitted, finishOldest } = setup();
  enter('running', 'NORMAL');
  const controller = new AbortController();
  enter('leaves', 'HIGH', { signal: controller.signal });
  enter('stays', 'NORMAL');
  await flush();
  controller.abort(new DOMException('client went away', 'AbortError'));
  await flush();
  assert.equal(failed.length, 1);
  assert.equal((failed[0]!.error as DOMException).message, 'client went away');
  assert.equal(gate.depth, 1);
  finishOldest();
  await flush();
  assert.deepEqual(
    admitted.map((a) => a.name),
    ['running', 'stays'],
  );
  const aborted = new AbortController();
  aborted.abort(new Error('already gone'));
  await assert.rejects(gate.acquire({ priority: 'HIGH', signal: aborted.signal, maxWaitMs: 1000 }), /already gone/);
});

test('stats: waiting per class, in flight, admitted, and queue wait totals for metrics', async () => {
  const { clock, gate, enter, finishOldest, admitted } = setup({ concurrency: 2 });
  enter('a', 'HIGH');
  enter('b', 'BATCH');
  enter('c', 'BATCH');
  enter('d', 'NORMAL');
  await flush();
  assert.deepEqual(
    admitted.map((a) => a.name),
    ['a', 'b'],
    'free slots go at once to whoever comes first',
  );
  let stats = gate.stats();
  assert.deepEqual(stats.waiting, { HIGH: 0, NORMAL: 1, BATCH: 1 });
  assert.equal(stats.inFlight, 2);
  clock.advance(250);
  finishOldest();
  await flush();
  assert.deepEqual(
    admitted.map((a) => a.name),
    ['a', 'b', 'd'],
    'among waiters, class order decides',
  );
  stats = gate.stats();
  assert.deepEqual(stats.waiting, { HIGH: 0, NORMAL: 0, BATCH: 1 });
  assert.deepEqual(stats.admitted, { HIGH: 1, NORMAL: 1, BATCH: 1 });
  assert.deepEqual(stats.waitMsTotal, { HIGH: 0, NORMAL: 250, BATCH: 0 });
  assert.equal(stats.maxWaitMs, 250);
  assert.equal(stats.inFlight, 2);
});

test("a release is idempotent: a second call never frees someone else's slot", async () => {
  const { gate, admitted, enter } = setup();
  enter('a', 'NORMAL');
  enter('b', 'NORMAL');
  enter('c', 'NORMAL');
  await flush();
  admitted[0]!.pass.release();
  admitted[0]!.pass.release();
  await flush();
  assert.deepEqual(
    admitted.map((a) => a.name),
    ['a', 'b'],
  );
  assert.equal(gate.stats().inFlight, 1);
});

test('every wait ends with its abort listener removed: admitted, timed out, evicted, refused or aborted', async () => {
  const { clock, gate, enter, finishOldest, admitted, failed } = setup({ maxQueue: 4, agingMs: 1_000_000 });
  const shared = new AbortController().signal;
  const listeners = () => getEventListeners(shared, 'abort').length;
  enter('running', 'NORMAL', { signal: shared });
  await flush();
  assert.equal(listeners(), 0, 'a slot granted at once adds no listener');
  enter('w1', 'NORMAL', { signal: shared });
  enter('w2', 'NORMAL', { signal: shared, maxWaitMs: 100 });
  enter('w3', 'BATCH', { signal: shared });
  enter('w4', 'NORMAL', { signal: shared });
  assert.equal(listeners(), 4, 'one listener per waiter');
  enter('h1', 'HIGH', { signal: shared }); // evicts w3
  enter('b1', 'BATCH', { signal: shared }); // refused: the queue is full of better ones
  const own = new AbortController();
  await flush();
  assert.equal(listeners(), 4, 'the evicted and the refused hold none');
  clock.advance(100);
  await flush();
  assert.equal(listeners(), 3, 'a timed-out wait removed its own');
  finishOldest();
  await flush();
  enter('leaves', 'NORMAL', { signal: own.signal });
  own.abort(new Error('gone'));
  await flush();
  assert.equal(getEventListeners(own.signal, 'abort').length, 0, 'an abort removes its listener');
  for (let i = 0; i < 3; i++) {
    finishOldest();
    await flush();
  }
  assert.deepEqual(
    admitted.map((a) => a.name),
    ['running', 'h1', 'w1', 'w4'],
  );
  assert.deepEqual(failed.map((f) => f.name).sort(), ['b1', 'leaves', 'w2', 'w3']);
  assert.equal(gate.depth, 0);
  assert.equal(listeners(), 0, 'nothing left on the signal');
  // Many admissions in a row on one signal leave nothing behind either (a leak would leave one each).
  for (let i = 0; i < 50; i++) {
    enter(`holds-${i}`, 'NORMAL', { signal: shared });
    enter(`waits-${i}`, 'NORMAL', { signal: shared });
    await flush();
    assert.equal(listeners(), 1);
    finishOldest();
    await flush();
    finishOldest();
    await flush();
  }
  assert.equal(admitted.length, 4 + 100);
  assert.equal(listeners(), 0);
});
