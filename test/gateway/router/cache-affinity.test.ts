// The memory affinity store (expiry on the injected clock, refresh on set, a bound on entries) and when a
// strategy lets a session stay on its deployment.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/core/clock.ts';
import { MemoryAffinityStore } from '../../../src/gateway/router/cache-affinity.ts';
import { buildGatewayCatalog } from '../../../src/gateway/router/gateway-catalog.ts';
import { acceptsAffinity } from '../../../src/gateway/router/select-deployment.ts';
import { gatewayConfig } from '../helpers/gateway-fixtures.ts';

describe('memory affinity store', () => {
  it('forgets a choice when its TTL passes; set() replaces it and starts the TTL again', async () => {
    const clock = new ManualClock();
    const store = new MemoryAffinityStore(clock);
    store.set('m:s', 'a/x', 1000);
    clock.advance(999);
    assert.equal(await store.get('m:s'), 'a/x');
    store.set('m:s', 'b/x', 1000);
    clock.advance(999);
    assert.equal(await store.get('m:s'), 'b/x');
    clock.advance(1);
    assert.equal(await store.get('m:s'), undefined);
    assert.equal(store.size, 0);
  });

  it('holds at most maxEntries, forgetting the least recently set first', async () => {
    const store = new MemoryAffinityStore(new ManualClock(), 2);
    store.set('one', 'a/x', 1000);
    store.set('two', 'a/x', 1000);
    store.set('one', 'b/x', 1000);
    store.set('three', 'a/x', 1000);
    assert.deepEqual([await store.get('one'), await store.get('two'), await store.get('three')], ['b/x', undefined, 'a/x']);
  });
});

describe('acceptsAffinity', () => {
  const catalog = buildGatewayCatalog(
    gatewayConfig(`
providers:
  relay: { type: openai, base_url: "http://127.0.0.1:1/v1", exchange_rate: 1.0 }
  second: { type: openai, base_url: "http://127.0.0.1:2/v1", exchange_rate: 1.0 }
  official: { type: openai, base_url: "http://127.0.0.1:3/v1", exchange_rate: 7.3 }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }, { provider: second }, { provider: official }]
`),
    { RELAY_API_KEY: 'k', SECOND_API_KEY: 'k', OFFICIAL_API_KEY: 'k' },
  );
  const [relay, second, official] = catalog.findModel('gpt-4.1')!.enabledDeployments;

  it('weighted, least-busy and lowest-latency let a session stay anywhere; cheapest only at the lowest price', () => {
    const all = [relay!, second!, official!];
    for (const strategy of ['weighted', 'least-busy', 'lowest-latency'] as const) assert.equal(acceptsAffinity(strategy, official!, all), true);
    assert.equal(acceptsAffinity('cheapest', second!, all), true, 'as cheap as the cheapest');
    assert.equal(acceptsAffinity('cheapest', official!, all), false, 'dearer: the session comes back to the cheapest');
    assert.equal(acceptsAffinity('cheapest', official!, [official!]), true);
  });
});
