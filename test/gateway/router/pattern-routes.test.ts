// Pattern routes: resolution order (name, alias, tier/auto, then patterns in order), the rule each
// route reports, the id sent upstream under upstream_model '{model}', key filters, unknown ids, and
// the /v1/models listing merged with what the upstreams list (cached, bounded waits).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/core/clock.ts';
import { HerdError } from '../../../src/core/errors.ts';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { listGatewayModels } from '../../../src/gateway/flow/describe-gateway.ts';
import type { Provider } from '../../../src/gateway/providers/provider.ts';
import { buildGatewayCatalog } from '../../../src/gateway/router/gateway-catalog.ts';
import { PromptTokenEstimate } from '../../../src/gateway/router/prompt-token-estimate.ts';
import { resolveRoute, resolveRouteUpstreamModel, type ResolvedRoute } from '../../../src/gateway/router/resolve-route.ts';
import { UpstreamModelLists } from '../../../src/gateway/router/upstream-model-lists.ts';
import { gatewayConfig } from '../helpers/gateway-fixtures.ts';

const config = gatewayConfig(`
providers:
  anthropic: { type: anthropic }
  openai: { type: openai }
models:
  claude:
    aliases: [sonnet]
    price: { input: 3, output: 15 }
    deployments: [{ provider: anthropic, upstream_model: '{model}' }]
    fallbacks: [gpt-5]
  claude-haiku:
    price: { input: 1, output: 5 }
    deployments: [{ provider: anthropic, upstream_model: claude-haiku-4-5 }]
  gpt-5:
    price: { input: 1.25, output: 10 }
    deployments: [{ provider: openai, upstream_model: '{model}' }, { provider: openai, upstream_model: gpt-5-fixed }]
routes:
  tiers: { fast: claude-haiku }
  patterns:
    - { match: 'claude-haiku-*', model: claude-haiku }
    - { match: 'claude-*', model: sonnet }
    - { match: 'gpt-5*', model: gpt-5 }
    - { match: '*', model: gpt-5 }
`);
const catalog = buildGatewayCatalog(config, { ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k' });
const resolve = (model: string, allowed?: (m: string) => boolean): Promise<ResolvedRoute> => {
  const request: ChatRequest = { model, messages: [{ role: 'user', content: 'hi' }] };
  return resolveRoute(catalog, model, new PromptTokenEstimate(request), allowed);
};
const summary = (r: ResolvedRoute) => [r.kind, r.model.name, r.rule];

describe('pattern routes: resolution', () => {
  it('exact names and aliases win over patterns, tiers too; then the first pattern that matches', async () => {
    assert.deepEqual(summary(await resolve('claude')), ['model', 'claude', 'model:claude']);
    assert.deepEqual(summary(await resolve('claude-haiku')), ['model', 'claude-haiku', 'model:claude-haiku'], 'a name that claude-* also matches');
    assert.deepEqual(summary(await resolve('sonnet')), ['alias', 'claude', 'alias:sonnet']);
    assert.deepEqual(summary(await resolve('fast')), ['tier', 'claude-haiku', 'tier:fast'], "a set tier wins over the catch-all '*'");
    assert.deepEqual(summary(await resolve('claude-haiku-4-5-20251001')), ['pattern', 'claude-haiku', 'pattern:claude-haiku-*']);
    assert.deepEqual(summary(await resolve('claude-opus-4-8')), ['pattern', 'claude', 'pattern:claude-*'], 'the pattern names an alias: routed to its model');
    assert.deepEqual(summary(await resolve('gpt-5-mini')), ['pattern', 'gpt-5', 'pattern:gpt-5*']);
    assert.deepEqual(summary(await resolve('quality')), ['pattern', 'gpt-5', 'pattern:*'], 'an unset tier name may match a pattern');
    assert.deepEqual(summary(await resolve('auto')), ['pattern', 'gpt-5', 'pattern:*'], 'no auto rules: auto is an id like any other');
  });

  it("a '{model}' deployment sends the client's own id on a pattern route, the model's name otherwise", async () => {
    const opus = await resolve('claude-opus-4-8');
    const claude = catalog.models.get('claude')!;
    assert.equal(resolveRouteUpstreamModel(opus, claude.deployments[0]!), 'claude-opus-4-8');
    assert.equal(resolveRouteUpstreamModel(await resolve('sonnet'), claude.deployments[0]!), 'claude', 'an alias is not an upstream id');
    // A fallback model's deployments are not the pattern's: their {model} is their own name.
    const gpt5 = catalog.models.get('gpt-5')!;
    assert.equal(resolveRouteUpstreamModel(opus, gpt5.deployments[0]!), 'gpt-5');
    const mini = await resolve('gpt-5-mini');
    assert.equal(resolveRouteUpstreamModel(mini, gpt5.deployments[0]!), 'gpt-5-mini');
    assert.equal(resolveRouteUpstreamModel(mini, gpt5.deployments[1]!), 'gpt-5-fixed', 'a fixed upstream_model stays fixed');
    const haiku = await resolve('claude-haiku-4-5-20251001');
    assert.equal(resolveRouteUpstreamModel(haiku, catalog.models.get('claude-haiku')!.deployments[0]!), 'claude-haiku-4-5');
  });

  it('a key allows a pattern-routed id when it allows the model the pattern routes to', async () => {
    const onlyClaude = (m: string) => m === 'claude';
    assert.equal((await resolve('claude-opus-4-8', onlyClaude)).model.name, 'claude');
    await assert.rejects(resolve('gpt-5-mini', onlyClaude), (err: unknown) => {
      assert.ok(err instanceof HerdError && err.code === 'PERMISSION_DENIED');
      assert.equal(err.message, '`gpt-5-mini` routes to `gpt-5`, which this key may not use.');
      return true;
    });
  });

  it('an id no name, tier or pattern matches is NOT_FOUND, naming it', async () => {
    const narrow = buildGatewayCatalog(
      gatewayConfig(`
providers: { anthropic: { type: anthropic } }
models:
  claude: { price: { input: 3, output: 15 }, deployments: [{ provider: anthropic, upstream_model: '{model}' }] }
routes: { patterns: [{ match: 'claude-*', model: claude }] }
`),
      { ANTHROPIC_API_KEY: 'k' },
    );
    const request: ChatRequest = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };
    await assert.rejects(resolveRoute(narrow, 'gpt-4o', new PromptTokenEstimate(request)), (err: unknown) => {
      assert.ok(err instanceof HerdError && err.code === 'NOT_FOUND');
      assert.match(err.message, /^The model `gpt-4o` does not exist or you do not have access to it\. Available models: claude, or an id matching claude-\*\.$/);
      return true;
    });
  });
});

describe('pattern routes: GET /v1/models', () => {
  const lists = new Map([
    ['anthropic', ['claude-opus-4-8', 'claude-haiku-4-5-20251001', 'claude-haiku', 'claude-sonnet-4-5-20250929']],
    ['openai', ['gpt-5', 'gpt-5-mini', 'gpt-4o', 'o3', 'claude-opus-4-8']],
  ]);

  it('adds each id an upstream lists that routes through a pattern, once, after the configured names', () => {
    const entries = listGatewayModels(catalog, 0, undefined, lists);
    assert.deepEqual(
      entries.map((e) => [e.id, e.herd.kind, e.herd.target ?? '', e.herd.pattern ?? '', e.owned_by]),
      [
        ['claude', 'model', '', '', 'anthropic'],
        ['claude-haiku', 'model', '', '', 'anthropic'],
        ['gpt-5', 'model', '', '', 'openai'],
        ['fast', 'tier', 'claude-haiku', '', 'herd'],
        ['claude-haiku-4-5-20251001', 'pattern', 'claude-haiku', 'claude-haiku-*', 'anthropic'],
        ['claude-opus-4-8', 'pattern', 'claude', 'claude-*', 'anthropic'],
        ['claude-sonnet-4-5-20250929', 'pattern', 'claude', 'claude-*', 'anthropic'],
        ['gpt-5-mini', 'pattern', 'gpt-5', 'gpt-5*', 'openai'],
        ['gpt-4o', 'pattern', 'gpt-5', '*', 'openai'],
        ['o3', 'pattern', 'gpt-5', '*', 'openai'],
      ],
    );
  });

  it('a key sees the listed ids of the models it may use only', () => {
    const ids = listGatewayModels(catalog, 0, (m) => m === 'claude', lists).map((e) => e.id);
    assert.deepEqual(ids, ['claude', 'claude-opus-4-8', 'claude-sonnet-4-5-20250929']);
  });
});

describe('upstream model lists: cached, refreshed in the background, never waited on for long', () => {
  function fakeProvider(answers: Array<() => Promise<string[]>>) {
    const calls: number[] = [];
    const provider: Provider = {
      name: 'up',
      chat: () => Promise.reject(new Error('unused')),
      stream: () => {
        throw new Error('unused');
      },
      close: () => Promise.resolve(),
      listModels: () => {
        calls.push(calls.length);
        const next = answers.shift();
        return next ? next() : Promise.reject(new Error('no more answers'));
      },
    };
    return { provider, calls };
  }

  it('fetches once, serves the copy until the TTL, then the stale copy while one refresh runs', async () => {
    const clock = new ManualClock();
    const lists = new UpstreamModelLists({ clock, ttlMs: 1000, waitMs: 50 });
    const { provider, calls } = fakeProvider([async () => ['a'], async () => ['a', 'b']]);
    assert.deepEqual(await lists.get(provider), ['a']);
    clock.advance(999);
    assert.deepEqual(await lists.get(provider), ['a']);
    assert.equal(calls.length, 1);
    clock.advance(1);
    assert.deepEqual(await lists.get(provider), ['a'], 'stale: answered at once, refreshed behind it');
    assert.equal(calls.length, 2);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(await lists.get(provider), ['a', 'b']);
    assert.equal(calls.length, 2);
  });

  it('a first fetch slower than waitMs answers empty and fills in later; a failure keeps the last list until retryMs', async () => {
    const clock = new ManualClock();
    const lists = new UpstreamModelLists({ clock, ttlMs: 1000, waitMs: 50, retryMs: 500 });
    let release: (ids: string[]) => void = () => undefined;
    const { provider, calls } = fakeProvider([() => new Promise<string[]>((resolve) => (release = resolve)), () => Promise.reject(new Error('503'))]);
    const first = lists.get(provider);
    clock.advance(50);
    assert.deepEqual(await first, []);
    release(['x']);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(await lists.get(provider), ['x']);
    clock.advance(1000);
    assert.deepEqual(await lists.get(provider), ['x'], 'the refresh fails behind the stale copy');
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calls.length, 2);
    clock.advance(499);
    assert.deepEqual(await lists.get(provider), ['x']);
    assert.equal(calls.length, 2, 'no retry before retryMs');
    clock.advance(1);
    await lists.get(provider);
    assert.equal(calls.length, 3);
  });

  it('a provider without listModels lists nothing', async () => {
    const lists = new UpstreamModelLists({ clock: new ManualClock() });
    const { provider } = fakeProvider([]);
    delete (provider as { listModels?: unknown }).listModels;
    assert.deepEqual(await lists.get(provider), []);
  });
});
