// Model resolution (name, alias, tier, auto thresholds), provider enablement, and the deployment
// strategies: cheapest after exchange rates, weighted, least-busy, lowest-latency; fallback order.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../src/core/errors.ts';
import type { ChatRequest } from '../../src/gateway/protocol/chat-types.ts';
import { DeploymentStats } from '../../src/gateway/router/deployment-stats.ts';
import { expandFallbacks } from '../../src/gateway/router/expand-fallbacks.ts';
import { buildGatewayCatalog, type CatalogDeployment } from '../../src/gateway/router/gateway-catalog.ts';
import { PromptTokenEstimate } from '../../src/gateway/router/prompt-token-estimate.ts';
import { resolveRoute } from '../../src/gateway/router/resolve-route.ts';
import { selectDeployment, type SelectionContext } from '../../src/gateway/router/select-deployment.ts';
import { estimatePromptTokens } from '../../src/gateway/protocol/usage-estimate.ts';
import { gatewayConfig, seededRandom } from './helpers/gateway-fixtures.ts';

const config = gatewayConfig(`
providers:
  holysheep: { type: openai, exchange_rate: 1.0 }
  openai: { type: openai, exchange_rate: 7.3 }
  anthropic: { type: anthropic, exchange_rate: 7.3 }
  gemini: { type: gemini, exchange_rate: 7.3 }
  deepseek: { type: openai, exchange_rate: 7.3 }
models:
  gpt-4.1:
    aliases: [gpt4]
    price: { input: 2.00, cached_input: 0.50, output: 8.00 }
    deployments: [{ provider: holysheep }, { provider: openai }]
    fallbacks: [deepseek-v3.2]
  claude-sonnet-4.5:
    aliases: [claude-sonnet-4-5]
    context_window: 200000
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: holysheep }, { provider: anthropic, upstream_model: claude-sonnet-4-5 }]
    fallbacks: [gpt-4.1, gemini-2.5-flash]
  gemini-2.5-flash:
    price: { input: 0.30, output: 2.50 }
    deployments: [{ provider: gemini }]
  deepseek-v3.2:
    price: { input: 0.28, output: 0.42 }
    deployments: [{ provider: deepseek, upstream_model: deepseek-chat }]
    fallbacks: [claude-sonnet-4.5]
routes:
  tiers: { fast: gemini-2.5-flash, balanced: deepseek-v3.2, quality: claude-sonnet-4.5, advanced: gpt-4.1 }
  auto:
    - { max_prompt_tokens: 500, tier: fast }
    - { max_prompt_tokens: 2000, tier: balanced }
    - { tier: quality }
`);

const allKeys = { HOLYSHEEP_API_KEY: 'k', OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'k', GEMINI_API_KEY: 'k', DEEPSEEK_API_KEY: 'k' };
const catalog = buildGatewayCatalog(config, allKeys);

const ask = (model: string, content = 'hi'): ChatRequest => ({ model, messages: [{ role: 'user', content }] });
const resolve = (model: string, content?: string, allowed?: (m: string) => boolean) => resolveRoute(catalog, model, new PromptTokenEstimate(ask(model, content)), allowed);

describe('model resolution', () => {
  it('finds a model by name and by each alias, and says which way it went', async () => {
    assert.deepEqual(await resolve('claude-sonnet-4.5').then((r) => [r.model.name, r.kind]), ['claude-sonnet-4.5', 'model']);
    assert.deepEqual(await resolve('claude-sonnet-4-5').then((r) => [r.model.name, r.kind]), ['claude-sonnet-4.5', 'alias']);
    assert.deepEqual(await resolve('gpt4').then((r) => [r.model.name, r.kind]), ['gpt-4.1', 'alias']);
  });

  it("routes seed 000's preference words to their tiers", async () => {
    for (const [tier, model] of [
      ['fast', 'gemini-2.5-flash'],
      ['balanced', 'deepseek-v3.2'],
      ['quality', 'claude-sonnet-4.5'],
      ['advanced', 'gpt-4.1'],
    ]) {
      const route = await resolve(tier!);
      assert.deepEqual([route.model.name, route.kind, route.tier], [model, 'tier', tier]);
    }
  });

  it('auto picks the tier by estimated prompt tokens against the configured thresholds', async () => {
    const withTokens = async (target: number) => {
      // Grow a prompt until the tokenizer (not a guess) puts it at the target size.
      let text = '';
      while ((await estimatePromptTokens(ask('auto', text))) < target) text += 'lorem ipsum dolor sit amet ';
      const tokens = await estimatePromptTokens(ask('auto', text));
      return { text, tokens };
    };
    assert.equal((await resolve('auto', 'short question')).model.name, 'gemini-2.5-flash');
    const small = await withTokens(480);
    assert.ok(small.tokens <= 500);
    assert.equal((await resolve('auto', small.text)).tier, 'fast');
    const medium = await withTokens(501);
    assert.ok(medium.tokens > 500 && medium.tokens <= 2000, String(medium.tokens));
    assert.deepEqual(await resolve('auto', medium.text).then((r) => [r.kind, r.tier, r.model.name]), ['auto', 'balanced', 'deepseek-v3.2']);
    const large = await withTokens(2001);
    assert.equal((await resolve('auto', large.text)).model.name, 'claude-sonnet-4.5');
  });

  it('a short prompt is routed without loading the tokenizer (byte bound)', async () => {
    const estimate = new PromptTokenEstimate(ask('auto', 'hello there'));
    await resolveRoute(catalog, 'auto', estimate);
    assert.equal(estimate.known(), undefined);
    assert.ok(estimate.upperBound() >= (await estimate.exact()));
  });

  it('an unknown model is NOT_FOUND with the available names, never a switch', async () => {
    await assert.rejects(resolve('gpt-5'), (err: unknown) => {
      assert.ok(err instanceof HerdError);
      assert.equal(err.code, 'NOT_FOUND');
      assert.equal(err.param, 'model');
      assert.equal(
        err.message,
        'The model `gpt-5` does not exist or you do not have access to it. Available models: ' +
          'gpt-4.1, claude-sonnet-4.5, gemini-2.5-flash, deepseek-v3.2, fast, balanced, quality, advanced, auto.',
      );
      return true;
    });
  });

  it("a key's allow-list limits names, tiers and the list shown; fallbacks never widen access", async () => {
    const onlyCheap = (m: string) => m === 'deepseek-v3.2' || m === 'gemini-2.5-flash';
    await assert.rejects(resolve('gpt4', 'x', onlyCheap), (err: unknown) => err instanceof HerdError && err.code === 'PERMISSION_DENIED');
    await assert.rejects(resolve('quality', 'x', onlyCheap), /`quality` routes to `claude-sonnet-4.5`, which this key may not use/);
    await assert.rejects(resolve('nope', 'x', onlyCheap), /Available models: gemini-2.5-flash, deepseek-v3.2, fast, balanced\./);
    const deepseek = catalog.models.get('deepseek-v3.2')!;
    assert.deepEqual(
      expandFallbacks(catalog, deepseek, onlyCheap).map((m) => m.name),
      ['deepseek-v3.2', 'gemini-2.5-flash'],
    );
  });

  it('fallback chains expand breadth first, each model once, cycles cut', () => {
    const claude = catalog.models.get('claude-sonnet-4.5')!;
    assert.deepEqual(
      expandFallbacks(catalog, claude).map((m) => m.name),
      ['claude-sonnet-4.5', 'gpt-4.1', 'gemini-2.5-flash', 'deepseek-v3.2'],
    );
  });
});

describe('provider enablement', () => {
  it('a provider without its key variable is disabled with the reason; its deployments drop out', () => {
    const partial = buildGatewayCatalog(config, { HOLYSHEEP_API_KEY: 'k', DEEPSEEK_API_KEY: '' });
    const openai = partial.providers.get('openai')!;
    assert.equal(openai.enabled, false);
    assert.equal(openai.disabledReason, 'OPENAI_API_KEY is not set');
    assert.equal(partial.providers.get('deepseek')!.disabledReason, 'DEEPSEEK_API_KEY is not set');
    assert.equal(partial.providers.get('holysheep')!.baseUrl, 'https://api.holysheep.ai/v1');
    assert.equal(partial.providers.get('anthropic')!.baseUrl, 'https://api.anthropic.com');
    const gpt = partial.models.get('gpt-4.1')!;
    assert.deepEqual(
      gpt.enabledDeployments.map((d) => d.provider.name),
      ['holysheep'],
    );
    const flash = partial.models.get('gemini-2.5-flash')!;
    assert.deepEqual(flash.enabledDeployments, []);
    assert.deepEqual(flash.unavailableReasons, ['gemini: GEMINI_API_KEY is not set']);
  });

  it('an OpenAI-compatible provider with no preset and no base_url is disabled, saying so', () => {
    const c = buildGatewayCatalog(gatewayConfig('providers:\n  myrelay: { type: openai }\n'), { MYRELAY_API_KEY: 'k' });
    assert.equal(c.providers.get('myrelay')!.apiKeyEnv, 'MYRELAY_API_KEY');
    assert.match(c.providers.get('myrelay')!.disabledReason!, /base_url is not set and there is no preset named 'myrelay' \(presets: holysheep, openai, deepseek\)/);
  });
});

describe('deployment strategies', () => {
  const deployments = (model: string) => catalog.models.get(model)!.deployments;
  const context = (overrides: Partial<SelectionContext> = {}): SelectionContext => ({
    stats: new DeploymentStats(),
    random: seededRandom(1),
    kind: 'chat',
    forecastTokens: async () => assert.fail('tokens not needed'),
    ...overrides,
  });

  it('cheapest picks the relay at ¥1/$ over the official API at ¥7.3/$, without tokenizing', async () => {
    const [holysheep, openai] = deployments('gpt-4.1');
    assert.equal(await selectDeployment('cheapest', [openai!, holysheep!], context()), holysheep);
  });

  it('cheapest weighs input and output by the forecast when prices cross', async () => {
    const base = deployments('gpt-4.1')[0]!;
    const inputCheap: CatalogDeployment = { ...base, key: 'a/x', price: { input: 1, output: 10 } };
    const outputCheap: CatalogDeployment = { ...base, key: 'b/x', price: { input: 3, output: 4 } };
    const pick = (prompt: number, completion: number) => selectDeployment('cheapest', [inputCheap, outputCheap], context({ forecastTokens: async () => ({ prompt, completion }) }));
    assert.equal(await pick(10_000, 100), inputCheap); // long prompt, short answer
    assert.equal(await pick(100, 4_000), outputCheap); // short prompt, long answer
  });

  it('a deployment price override counts, times its exchange rate', async () => {
    const [holysheep, openai] = deployments('gpt-4.1');
    const pricey: CatalogDeployment = { ...holysheep!, price: { input: 20, output: 80 } };
    assert.equal(await selectDeployment('cheapest', [pricey, openai!], context()), openai);
  });

  it('weighted spreads requests roughly by weight (seeded)', async () => {
    const [a, b] = deployments('gpt-4.1');
    const heavy = { ...a!, weight: 3 };
    const light = { ...b!, weight: 1 };
    const ctx = context({ random: seededRandom(42) });
    let heavyCount = 0;
    for (let i = 0; i < 4000; i++) if ((await selectDeployment('weighted', [heavy, light], ctx)) === heavy) heavyCount++;
    assert.ok(heavyCount > 2850 && heavyCount < 3150, String(heavyCount));
  });

  it('least-busy picks the deployment with fewest requests in flight', async () => {
    const [a, b] = deployments('gpt-4.1');
    const stats = new DeploymentStats();
    stats.begin(a!.key);
    stats.begin(a!.key);
    stats.begin(b!.key);
    assert.equal(await selectDeployment('least-busy', [a!, b!], context({ stats })), b);
    stats.end(a!.key);
    stats.end(a!.key);
    assert.equal(await selectDeployment('least-busy', [a!, b!], context({ stats })), a);
  });

  it('lowest-latency tries unmeasured deployments first, then follows the moving average', async () => {
    const [a, b] = deployments('gpt-4.1');
    const stats = new DeploymentStats();
    stats.recordLatency(a!.key, 'chat', 100);
    assert.equal(await selectDeployment('lowest-latency', [a!, b!], context({ stats })), b);
    stats.recordLatency(b!.key, 'chat', 300);
    assert.equal(await selectDeployment('lowest-latency', [a!, b!], context({ stats })), a);
    for (let i = 0; i < 10; i++) stats.recordLatency(a!.key, 'chat', 900); // a slows down
    assert.equal(await selectDeployment('lowest-latency', [a!, b!], context({ stats })), b);
    // Streams are judged by their own time to first token.
    assert.equal(await selectDeployment('lowest-latency', [a!, b!], context({ stats, kind: 'stream' })), a);
  });
});
