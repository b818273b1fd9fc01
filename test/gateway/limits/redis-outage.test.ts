// Redis unreachable (REDIS_URL behind a TCP proxy the test cuts and restores, as a network gone without
// a reset): key limits fail as limits.redis.on_error says — fail_open lets requests through and counts them,
// fail_closed refuses with UNAVAILABLE — the response cache answers from memory, nothing waits longer than a
// command timeout, and once the network is back the limits count again without a restart.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cacheConfigSchema } from '../../../src/config/cache-config-schema.ts';
import { limitsConfigSchema } from '../../../src/config/limits-config-schema.ts';
import type { HerdError } from '../../../src/core/errors.ts';
import { createResponseCache } from '../../../src/gateway/cache/create-response-cache.ts';
import { createGatewayLimits, type GatewayLimits } from '../../../src/gateway/limits/create-gateway-limits.ts';
import { mapErrorToOpenAI } from '../../../src/http/map-openai-error.ts';
import { startTcpFaultProxy, targetOf, throughProxy, type TcpFaultProxy } from '../../helpers/tcp-fault-proxy.ts';
import { answerInput, textResponse } from '../cache/cache-fixtures.ts';

const REDIS_URL = process.env.REDIS_URL;
const PREFIX = `herd:test:outage:${process.pid}:${Date.now()}:`;

async function eventually(what: string, probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting: ${what}`);
}

describe('Redis unreachable', { skip: REDIS_URL ? false : 'redis outage: REDIS_URL is not set (e.g. REDIS_URL=redis://127.0.0.1:6379)' }, () => {
  const closers: (() => Promise<void>)[] = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });
  const proxied = async (): Promise<{ proxy: TcpFaultProxy; url: string }> => {
    const proxy = await startTcpFaultProxy(targetOf(REDIS_URL as string, 6379));
    closers.push(() => proxy.close());
    return { proxy, url: throughProxy(REDIS_URL as string, proxy) };
  };
  const limitsThrough = async (url: string, onError: 'fail_open' | 'fail_closed', errors: string[]): Promise<GatewayLimits> => {
    const config = limitsConfigSchema.parse({ redis: { url, key_prefix: `${PREFIX}${onError}:`, timeout_ms: 100, on_error: onError } });
    const limits = await createGatewayLimits(config, { onError: (e) => errors.push(e.message) });
    closers.push(() => limits.close());
    assert.equal(await limits.ready(5000), true);
    return limits;
  };
  const key = (id: string) => ({ id, name: id, rpm: 3 });

  it('fail_open: requests pass while Redis is cut off, counted and logged once; limits hold again after', async () => {
    const { proxy, url } = await proxied();
    const errors: string[] = [];
    const limits = await limitsThrough(url, 'fail_open', errors);
    const k = key(`open-${Date.now()}`);
    for (let i = 0; i < 3; i++) await (await limits.keys.reserve(k, 10)).settle(10);
    await assert.rejects(limits.keys.reserve(k, 10), (e: HerdError) => e.code === 'RATE_LIMITED');

    proxy.cut('blackhole');
    // Over its RPM, yet let through: nobody can count it. Each waits one command timeout at most.
    for (let i = 0; i < 5; i++) await (await limits.keys.reserve(k, 10)).settle(10);
    assert.equal(limits.store.outage?.allowed, 5);
    assert.equal(errors.filter((e) => /fail_open/.test(e)).length, 1, `one log line for the outage: ${errors.join(' | ')}`);

    proxy.restore();
    // The silent connection is dropped and a new one made: the window counts again.
    await eventually('limits counted in Redis again', async () => {
      try {
        await (await limits.keys.reserve(k, 10)).settle(10);
        return false;
      } catch (e) {
        return (e as HerdError).code === 'RATE_LIMITED';
      }
    });
  });

  it('fail_closed: requests are refused with 503 and a message that says why', async () => {
    const { proxy, url } = await proxied();
    const errors: string[] = [];
    const limits = await limitsThrough(url, 'fail_closed', errors);
    const k = key(`closed-${Date.now()}`);
    await (await limits.keys.reserve(k, 10)).settle(10);
    proxy.cut('refuse');
    const refusal = await limits.keys.reserve(k, 10).then(
      () => undefined,
      (e: HerdError) => e,
    );
    assert.equal(refusal?.code, 'UNAVAILABLE');
    const answer = mapErrorToOpenAI(refusal as HerdError);
    assert.equal(answer.status, 503);
    assert.match(JSON.stringify(answer.body), /rate limits cannot be checked right now \(Redis is unavailable; limits.redis.on_error is fail_closed\)/);
    assert.equal(limits.store.outage?.refused, 1);
    proxy.restore();
    await eventually('Redis answers again', async () => {
      try {
        await (await limits.keys.reserve(k, 10)).settle(10);
        return true;
      } catch {
        return false;
      }
    });
  });

  it('the response cache answers from memory while Redis is cut off and uses Redis again after', async () => {
    const { proxy, url } = await proxied();
    const lines: string[] = [];
    const open = async () => {
      const cache = await createResponseCache({ config: cacheConfigSchema.parse({ redis: { url, key_prefix: `${PREFIX}cache:`, timeout_ms: 100 } }), log: (l) => lines.push(l) });
      closers.push(() => cache.close());
      assert.equal(await cache.ready(5000), true);
      return cache;
    };
    const [a, b] = [await open(), await open()];
    proxy.cut('blackhole');
    await a.store('during', answerInput(textResponse('kept in memory'), 5));
    assert.equal((await a.lookup('during'))?.tier, 'memory', 'what this replica stored it still serves');
    assert.equal(await b.lookup('during'), undefined, 'the other replica misses (and does not wait)');
    assert.ok(a.stats.redisErrors + b.stats.redisErrors >= 1);
    proxy.restore();
    await eventually('the Redis tier works again', async () => {
      await a.store('after', answerInput(textResponse('shared again'), 5));
      return (await b.lookup('after'))?.tier === 'redis';
    });
    assert.ok(lines.length >= 1, 'the outage was logged');
  });
});
