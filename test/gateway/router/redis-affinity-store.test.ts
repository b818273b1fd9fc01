// The Redis affinity store: choices with their TTL in a real Redis (REDIS_URL), and an unreachable Redis
// that answers every lookup with "none" and swallows writes, reported once, instead of failing requests.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { createAffinityStore } from '../../../src/gateway/router/create-affinity-store.ts';
import { MemoryAffinityStore } from '../../../src/gateway/router/cache-affinity.ts';
import { gatewayConfig } from '../helpers/gateway-fixtures.ts';

const REDIS_URL = process.env.REDIS_URL;
const routes = (yaml = '') => gatewayConfig(`routes: { affinity: { ${yaml} } }`).routes;

describe('createAffinityStore', () => {
  it('none when affinity is off; memory without Redis; Redis from limits.redis, else cache.redis', async () => {
    assert.equal(await createAffinityStore({ routes: routes('enabled: false'), limits: {}, cache: {} }), undefined);
    assert.ok((await createAffinityStore({ routes: routes(), limits: {}, cache: {} })) instanceof MemoryAffinityStore);
    const store = await createAffinityStore({ routes: routes(), limits: {}, cache: { redis: { url: 'redis://127.0.0.1:1', ttl_s: 60, key_prefix: 'c:', timeout_ms: 50 } } });
    assert.equal(store?.shared, true);
    await store?.close();
  });

  it('an unreachable Redis: lookups answer none, writes are dropped, one error line', async () => {
    const errors: string[] = [];
    const store = await createAffinityStore(
      { routes: routes(), limits: { redis: { url: 'redis://127.0.0.1:1', key_prefix: 'l:', timeout_ms: 50, on_error: 'fail_open', lease_ms: 30_000, poll_ms: 50 } }, cache: {} },
      { onError: (err) => errors.push(err.message) },
    );
    assert.equal(await store?.get('m:s'), undefined);
    store?.set('m:s', 'left/x', 1000);
    assert.equal(await store?.get('m:s'), undefined);
    await store?.close();
    assert.ok(errors.filter((e) => e.startsWith('prompt-cache affinity')).length === 1, errors.join('\n'));
  });
});

describe('redis affinity store', { skip: REDIS_URL ? false : 'redis affinity: REDIS_URL is not set (e.g. REDIS_URL=redis://127.0.0.1:6379)' }, () => {
  it("keeps a choice under key_prefix with the session's TTL, replaced and refreshed by set()", async () => {
    const prefix = `herd:test:affinity-store:${process.pid}:${Date.now()}:`;
    const store = await createAffinityStore({
      routes: routes(`key_prefix: "${prefix}"`),
      limits: { redis: { url: REDIS_URL!, key_prefix: 'unused:', timeout_ms: 250, on_error: 'fail_open', lease_ms: 30_000, poll_ms: 50 } },
      cache: {},
    });
    const admin = new Redis(REDIS_URL!);
    try {
      assert.equal(await store?.ready?.(2000), true);
      assert.equal(await store?.get('m:s'), undefined);
      store?.set('m:s', 'left/x', 60_000);
      store?.set('m:s', 'right/x', 3_600_000);
      assert.equal(await store?.get('m:s'), 'right/x');
      const ttl = await admin.pttl(`${prefix}m:s`);
      assert.ok(ttl > 60_000 && ttl <= 3_600_000, `ttl ${ttl}`);
    } finally {
      await admin.del(`${prefix}m:s`);
      await admin.quit();
      await store?.close();
    }
  });
});
