// Provider account limits (a plan's RPM and concurrency) as a queue rather than upstream 429s,
// failing fast when the slot would come after the deadline; and the combined admission hook
// (upstream model slot, then provider slot) built from the limits config. ManualClock throughout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { limitsConfigSchema } from '../../../src/config/limits-config-schema.ts';
import { ManualClock } from '../../../src/core/clock.ts';
import type { HerdError } from '../../../src/core/errors.ts';
import { createGatewayLimits } from '../../../src/gateway/limits/create-gateway-limits.ts';
import { MemoryLimitStore } from '../../../src/gateway/limits/memory-limit-store.ts';
import type { GatePass } from '../../../src/gateway/limits/priority-gate.ts';
import { ProviderLimiter, type ProviderLimitTarget } from '../../../src/gateway/limits/provider-limiter.ts';

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
const NEVER = new AbortController().signal;
/** The pass a request got by now (fails the test if it got none). */
const held = (pass: GatePass | undefined): GatePass => {
  assert.ok(pass, 'admitted by now');
  return pass;
};

function providerLimiter(clock: ManualClock) {
  return new ProviderLimiter({ store: new MemoryLimitStore(clock), clock, agingMs: 10_000, maxQueue: 100, leaseMs: 30_000, pollMs: 50 });
}
const provider = (name: string, limits: ProviderLimitTarget['settings']['limits']): ProviderLimitTarget => ({ name, settings: { limits } });

test("provider RPM: requests queue for the window instead of hitting the upstream's 429", async () => {
  const clock = new ManualClock();
  const limiter = providerLimiter(clock);
  const relay = provider('holysheep', { rpm: 2 });
  await limiter.acquire(relay, { priority: 'NORMAL', signal: NEVER, maxWaitMs: 1000 });
  clock.advance(5000);
  await limiter.acquire(relay, { priority: 'NORMAL', signal: NEVER, maxWaitMs: 1000 });

  // The next slot frees at t = 60 s; a request that may wait only 10 s is told at once.
  clock.advance(5000);
  await assert.rejects(limiter.acquire(relay, { priority: 'NORMAL', signal: NEVER, maxWaitMs: 10_000 }), (err: HerdError) => {
    assert.equal(err.code, 'UNAVAILABLE');
    assert.equal(err.retryAfterSeconds, 50);
    assert.equal(err.message, 'provider holysheep is busy: its next slot frees in 50.0 s, later than this request can wait.');
    return true;
  });
  // One that can wait gets the slot the moment it frees.
  let admittedAt: number | undefined;
  void limiter.acquire(relay, { priority: 'NORMAL', signal: NEVER, maxWaitMs: 120_000 }).then(() => {
    admittedAt = clock.now();
  });
  await flush();
  clock.advance(49_999);
  await flush();
  assert.equal(admittedAt, undefined);
  clock.advance(1);
  await flush();
  assert.equal(admittedAt, 60_000);
  const [stats] = limiter.stats();
  assert.equal(stats!.provider, 'holysheep');
  assert.deepEqual(stats!.rejected, { timeout: 0, full: 0, evicted: 0, too_late: 1 });
  assert.equal(stats!.waitMsTotal.NORMAL, 50_000);
});

test("provider concurrency: the plan's N slots, handed out in priority order as they free", async () => {
  const clock = new ManualClock();
  const limiter = providerLimiter(clock);
  const relay = provider('holysheep', { concurrency: 2, rpm: 60 });
  const passes: [string, GatePass][] = [];
  const enter = (name: string, priority: 'HIGH' | 'NORMAL' | 'BATCH') => {
    void limiter.acquire(relay, { priority, signal: NEVER, maxWaitMs: 60_000 }).then((pass) => {
      passes.push([name, pass]);
    });
  };
  enter('a', 'NORMAL');
  enter('b', 'NORMAL');
  await flush();
  enter('batch', 'BATCH');
  enter('high', 'HIGH');
  await flush();
  assert.deepEqual(
    passes.map(([n]) => n),
    ['a', 'b'],
  );
  passes[0]![1].release();
  await flush();
  passes[1]![1].release();
  await flush();
  assert.deepEqual(
    passes.map(([n]) => n),
    ['a', 'b', 'high', 'batch'],
  );
});

test('a provider without limits costs nothing: no queue, no stats', async () => {
  const clock = new ManualClock();
  const limiter = providerLimiter(clock);
  const pass = await limiter.acquire(provider('openai', {}), { priority: 'BATCH', signal: NEVER, maxWaitMs: 0 });
  assert.equal(pass.waitedMs, 0);
  pass.release();
  assert.deepEqual(limiter.stats(), []);
});

test('the admission hook: a slot on the upstream model, then one on its provider, both freed together', async () => {
  const clock = new ManualClock();
  const config = limitsConfigSchema.parse({ admission: { concurrency: 8, queue_timeout_ms: 1000, models: { 'holysheep/gpt-4.1': { concurrency: 1 } } } });
  const limits = await createGatewayLimits(config, { clock });
  const deployment = { key: 'holysheep/gpt-4.1', provider: provider('holysheep', { concurrency: 1 }) };
  const other = { key: 'holysheep/deepseek-v3.2', provider: deployment.provider };

  const first = await limits.admission.acquire({ deployment, priority: 'NORMAL', signal: NEVER, maxWaitMs: 10_000 });
  // Same model: waits on the model's 1 slot. Other model, same provider: waits on the provider.
  const got: { second?: GatePass; third?: GatePass } = {};
  void limits.admission.acquire({ deployment, priority: 'NORMAL', signal: NEVER, maxWaitMs: 10_000 }).then((p) => {
    got.second = p;
  });
  void limits.admission.acquire({ deployment: other, priority: 'HIGH', signal: NEVER, maxWaitMs: 10_000 }).then((p) => {
    got.third = p;
  });
  await flush();
  assert.deepEqual([got.second, got.third], [undefined, undefined]);
  const stats = limits.admission.stats();
  assert.deepEqual(
    stats.models.map((m) => [m.upstreamModel, m.concurrency, m.inFlight, m.waiting.NORMAL]),
    [
      ['holysheep/gpt-4.1', 1, 1, 1],
      ['holysheep/deepseek-v3.2', 8, 1, 0],
    ],
  );
  assert.deepEqual(
    stats.providers.map((p) => [p.provider, p.inFlight, p.waiting.HIGH]),
    [['holysheep', 1, 1]],
  );

  clock.advance(200);
  first.release();
  first.release();
  await flush();
  // The provider slot goes to the HIGH request of the other model; the second one holds its
  // model slot and waits for the provider.
  assert.equal(got.third?.waitedMs, 200);
  assert.equal(got.second, undefined);

  // Its provider wait is bounded by what is left of its budget (queue_timeout_ms is for the model queue).
  clock.advance(1000);
  await flush();
  assert.equal(got.second, undefined, 'still within its 10 s budget');
  held(got.third).release();
  await flush();
  held(got.second).release();
  await flush();
  assert.deepEqual(
    limits.admission.stats().models.map((m) => m.inFlight),
    [0, 0],
  );
  await limits.close();
});

test('when the provider queue gives up, the model slot taken for it is given back', async () => {
  const clock = new ManualClock();
  const limits = await createGatewayLimits(limitsConfigSchema.parse({ admission: { concurrency: 1 } }), { clock });
  const relay = provider('holysheep', { rpm: 1 });
  const a = { key: 'holysheep/a', provider: relay };
  await limits.admission.acquire({ deployment: a, priority: 'NORMAL', signal: NEVER, maxWaitMs: 1000 });
  const b = { key: 'holysheep/b', provider: relay };
  await assert.rejects(
    limits.admission.acquire({ deployment: b, priority: 'NORMAL', signal: NEVER, maxWaitMs: 1000 }),
    /provider holysheep is busy: its next slot frees in 60\.0 s/,
  );
  assert.equal(limits.admission.stats().models.find((m) => m.upstreamModel === 'holysheep/b')!.inFlight, 0);
});
