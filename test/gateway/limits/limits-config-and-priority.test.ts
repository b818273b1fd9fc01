// The `limits` section of herd.yaml (defaults, Redis, per-upstream-model overrides checked against
// the configured deployments) and how a request's priority class is resolved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { checkGatewayConfig, gatewayConfigShape } from '../../../src/config/gateway-config-schema.ts';
import { checkLimitsConfig, limitsConfigSchema, limitsConfigShape } from '../../../src/config/limits-config-schema.ts';
import type { HerdError } from '../../../src/core/errors.ts';
import { parsePriority, resolvePriority } from '../../../src/gateway/limits/priority.ts';

// How the lead merges it: spread the shape, call the check from superRefine.
const herdLike = z.strictObject({ ...gatewayConfigShape, ...limitsConfigShape }).superRefine((c, ctx) => {
  checkGatewayConfig(c, ctx);
  checkLimitsConfig(c, ctx);
});

test('defaults: limits in this process, 64 slots per upstream model, 30 s queue, 10 s aging, 1000 waiters', () => {
  assert.deepEqual(limitsConfigSchema.parse({}), {
    admission: { concurrency: 64, queue_timeout_ms: 30_000, aging_ms: 10_000, max_queue: 1000, models: {} },
  });
  assert.deepEqual(limitsConfigSchema.parse({ redis: { url: 'redis://10.0.0.5:6379/2' } }).redis, {
    url: 'redis://10.0.0.5:6379/2',
    key_prefix: 'herd:limits:',
    timeout_ms: 250,
    on_error: 'fail_open',
    lease_ms: 30_000,
    poll_ms: 50,
  });
});

test('bad values are reported at their path; unknown keys are errors', () => {
  const issues = (value: unknown) => {
    const result = limitsConfigSchema.safeParse(value);
    assert.ok(!result.success);
    return result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };
  assert.match(issues({ redis: { url: 'localhost:6379' } })[0]!, /^redis\.url: must be a redis:\/\/ or rediss:\/\/ URL$/);
  assert.match(issues({ redis: { url: 'redis://x', on_error: 'ignore' } })[0]!, /^redis\.on_error: /);
  assert.match(issues({ admission: { concurrency: 0 } })[0]!, /^admission\.concurrency: /);
  assert.match(issues({ admission: { models: { 'gpt-4.1': { concurrency: 2 } } } })[0]!, /^admission\.models\.gpt-4\.1: must be provider\/upstream_model$/);
  assert.match(issues({ admission: { models: { 'holysheep/gpt-4.1': { slots: 2 } } } })[0]!, /Unrecognized key/);
  assert.match(issues({ admision: {} })[0]!, /Unrecognized key/);
});

test('an override must name a configured deployment (upstream_model defaults to the model name)', () => {
  const base = {
    providers: { holysheep: { type: 'openai' }, deepseek: { type: 'openai' } },
    models: {
      'gpt-4.1': { price: { input: 2, output: 8 }, deployments: [{ provider: 'holysheep' }] },
      'deepseek-v3.2': { price: { input: 0.28, output: 0.42 }, deployments: [{ provider: 'deepseek', upstream_model: 'deepseek-chat' }] },
    },
  };
  const good = herdLike.parse({ ...base, limits: { admission: { models: { 'holysheep/gpt-4.1': { concurrency: 4 }, 'deepseek/deepseek-chat': { aging_ms: 500 } } } } });
  assert.equal(good.limits.admission.models['holysheep/gpt-4.1']?.concurrency, 4);
  const bad = herdLike.safeParse({ ...base, limits: { admission: { models: { 'deepseek/deepseek-v3.2': { concurrency: 4 } } } } });
  assert.ok(!bad.success);
  assert.deepEqual(
    bad.error.issues.map((i) => [i.path, i.message]),
    [[['limits', 'admission', 'models', 'deepseek/deepseek-v3.2'], 'no deployment is deepseek/deepseek-v3.2: known upstream models are deepseek/deepseek-chat, holysheep/gpt-4.1']],
  );
});

test("priority: the x-herd-priority header, else the key's default, else NORMAL", () => {
  assert.equal(resolvePriority('high'), 'HIGH');
  assert.equal(resolvePriority(' Batch ', 'HIGH'), 'BATCH', 'the header wins over the key');
  assert.equal(resolvePriority(undefined, 'BATCH'), 'BATCH');
  assert.equal(resolvePriority('', 'HIGH'), 'HIGH', 'a blank header counts as absent');
  assert.equal(resolvePriority(undefined), 'NORMAL');
  assert.equal(resolvePriority(['normal', 'high']), 'NORMAL');
  assert.throws(
    () => resolvePriority('urgent'),
    (err: HerdError) => err.code === 'INVALID_ARG' && err.param === 'x-herd-priority' && err.message === "x-herd-priority must be one of high, normal, batch; got 'urgent'",
  );
  assert.throws(
    () => parsePriority('x'.repeat(100), '--priority'),
    (err: HerdError) => err.param === '--priority' && err.message.endsWith(`'${'x'.repeat(40)}…'`),
  );
});
