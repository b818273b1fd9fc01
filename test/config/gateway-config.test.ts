// The gateway sections of herd.yaml: defaults, and cross-reference errors reported at the exact
// path (and line) of the offending value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultHerdConfig, parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { HerdError } from '../../src/core/errors.ts';

/** Every problem line of a rejected config. */
function problems(yaml: string): string[] {
  try {
    parseHerdConfig(yaml, 'h.yaml', {});
  } catch (err) {
    assert.ok(err instanceof HerdError && err.code === 'INVALID_ARG', String(err));
    return err.message.split('\n');
  }
  assert.fail('config was accepted');
}

const base = `providers:
  holysheep: { type: openai, exchange_rate: 1.0 }
  openai: { type: openai, exchange_rate: 7.3 }
  anthropic: { type: anthropic, exchange_rate: 7.3, default_max_tokens: 8192 }
`;

test('defaults: no providers or models, HERD_MASTER_KEY, ./data/herd.db, 120 s deadline', () => {
  const c = defaultHerdConfig();
  assert.deepEqual(c.providers, {});
  assert.deepEqual(c.models, {});
  assert.deepEqual(c.auth, { master_key_env: 'HERD_MASTER_KEY', db: './data/herd.db', failed_keys: { max_per_address: 20, window_s: 60 } });
  assert.deepEqual(c.routes, { tiers: {}, auto: [], patterns: [], deadline_ms: 120_000, affinity: { enabled: true, prefix_kb: 8, ttl_s: 300, key_prefix: 'herd:affinity:' } });
});

test('a full gateway config parses with per-provider defaults filled in', () => {
  const c = parseHerdConfig(
    `${base}
models:
  gpt-4.1:
    aliases: [gpt4]
    price: { input: 2.00, cached_input: 0.50, output: 8.00 }
    deployments:
      - { provider: holysheep }
      - { provider: openai, upstream_model: gpt-4.1-2025-04-14, weight: 3 }
    fallbacks: [claude-sonnet-4-5]
  claude-sonnet-4.5:
    aliases: [claude-sonnet-4-5]
    context_window: 200000
    price: { input: 3, output: 15, cache_write: 3.75 }
    deployments: [{ provider: anthropic, upstream_model: claude-sonnet-4-5 }]
    ms_per_token: 30
routes:
  tiers: { quality: claude-sonnet-4.5, advanced: gpt4 }
  auto:
    - { max_prompt_tokens: 2000, tier: advanced }
    - { tier: quality }
`,
    'h.yaml',
    {},
  );
  const holysheep = c.providers.holysheep!;
  assert.equal(holysheep.timeout_ms, 60_000);
  assert.deepEqual(holysheep.retry, { attempts: 3, base_ms: 500, cap_ms: 20_000 });
  assert.deepEqual(holysheep.breaker, { failure_ratio: 0.5, min_requests: 5, window_ms: 60_000, cooldown_ms: 30_000 });
  assert.equal(c.providers.anthropic!.default_max_tokens, 8192);
  const gpt = c.models['gpt-4.1']!;
  assert.equal(gpt.strategy, 'cheapest');
  assert.equal(gpt.deployments[0]!.weight, 1);
  assert.equal(gpt.deployments[1]!.weight, 3);
  assert.equal(c.models['claude-sonnet-4.5']!.ms_per_token, 30);
});

test('a deployment naming an unknown provider lists the known ones', () => {
  const lines = problems(`${base}
models:
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments:
      - { provider: holysheep }
      - { provider: x }
`);
  assert.deepEqual(lines, ["h.yaml:11:21: models.gpt-4.1.deployments[1].provider: unknown provider 'x' (known: holysheep, openai, anthropic)"]);
});

test('fallbacks and tiers must name known models (or aliases); a model cannot fall back to itself', () => {
  const lines = problems(`${base}
models:
  gpt-4.1:
    aliases: [gpt4]
    price: { input: 2, output: 8 }
    deployments: [{ provider: holysheep }]
    fallbacks: [gpt4, deepseek-v3.2]
routes:
  tiers: { fast: gemini-2.5-flash, advanced: gpt4 }
`);
  assert.deepEqual(lines, [
    "h.yaml:11:17: models.gpt-4.1.fallbacks[0]: 'gpt4' is this model itself",
    "h.yaml:11:23: models.gpt-4.1.fallbacks[1]: unknown model 'deepseek-v3.2' (known: gpt-4.1)",
    "h.yaml:13:18: routes.tiers.fast: unknown model 'gemini-2.5-flash' (known: gpt-4.1)",
  ]);
});

test('alias collisions and route names used as model names are errors', () => {
  const lines = problems(`${base}
models:
  gpt-4.1:
    aliases: [gpt4, fast]
    price: { input: 2, output: 8 }
    deployments: [{ provider: holysheep }]
  gpt-4o:
    aliases: [gpt4, gpt-4.1]
    price: { input: 2.5, output: 10 }
    deployments: [{ provider: openai }]
  auto:
    price: { input: 1, output: 1 }
    deployments: [{ provider: openai }]
`);
  assert.deepEqual(lines, [
    "h.yaml:16:5: models.auto: 'auto' is a route name (auto, fast, balanced, quality, advanced) and cannot name a model",
    "h.yaml:8:21: models.gpt-4.1.aliases[1]: 'fast' is a route name and cannot be an alias",
    "h.yaml:12:15: models.gpt-4o.aliases[0]: alias 'gpt4' is already used by model 'gpt-4.1'",
    "h.yaml:12:21: models.gpt-4o.aliases[1]: 'gpt-4.1' is already the name of a model",
  ]);
});

test('auto rules: the last must be a catch-all, thresholds must rise, tiers must be set', () => {
  const models = `
models:
  m:
    price: { input: 1, output: 1 }
    deployments: [{ provider: openai }]
routes:
  tiers: { fast: m, balanced: m }`;
  assert.deepEqual(
    problems(`${base}${models}
  auto:
    - { max_prompt_tokens: 500, tier: fast }
    - { max_prompt_tokens: 2000, tier: balanced }
`),
    ['h.yaml:14:7: routes.auto[1]: the last rule must match every request: leave out max_prompt_tokens (e.g. { tier: quality })'],
  );
  assert.deepEqual(
    problems(`${base}${models}
  auto:
    - { max_prompt_tokens: 500, tier: fast }
    - { max_prompt_tokens: 400, tier: balanced }
    - { tier: quality }
`),
    [
      "h.yaml:14:28: routes.auto[1].max_prompt_tokens: 400 is not above the previous rule's 500, so this rule can never match",
      "h.yaml:15:15: routes.auto[2].tier: tier 'quality' is not set in routes.tiers",
    ],
  );
  assert.deepEqual(
    problems(`${base}${models}
  auto:
    - { tier: fast }
    - { tier: balanced }
`),
    ['h.yaml:13:7: routes.auto[0]: a rule without max_prompt_tokens matches everything, so the rules after it can never match'],
  );
});

test('field errors: prices, types, type-specific options, retry cap below base', () => {
  const lines = problems(`
providers:
  a: { type: openai, base_url: "ftp://relay", default_max_tokens: 10, retry: { base_ms: 1000, cap_ms: 500 } }
  b: { type: bedrock }
models:
  m:
    price: { input: -1, output: 1 }
    deployments: []
`);
  assert.ok(
    lines.some((l) => l.startsWith('h.yaml:3:32: providers.a.base_url: must be an http:// or https:// URL')),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => /^h\.yaml:4:14: providers\.b\.type: .*openai.*anthropic.*gemini/.test(l)),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => l.startsWith('h.yaml:7:21: models.m.price.input: ')),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => l === 'h.yaml:8:18: models.m.deployments: needs at least one deployment'),
    lines.join('\n'),
  );
  const second = problems(`
providers:
  a: { type: openai, base_url: "https://relay", default_max_tokens: 10, retry: { base_ms: 1000, cap_ms: 500 } }
`);
  assert.deepEqual(second, [
    'h.yaml:3:69: providers.a.default_max_tokens: only valid for type: anthropic',
    'h.yaml:3:105: providers.a.retry.cap_ms: must be at least base_ms (1000)',
  ]);
});

test("every deployment needs a price, its own or the model's", () => {
  assert.deepEqual(
    problems(`${base}
models:
  m:
    deployments:
      - { provider: openai, price: { input: 1, output: 2 } }
      - { provider: holysheep }
`),
    ['h.yaml:10:9: models.m.deployments[1]: no price: set price on the model or on this deployment (USD per million tokens)'],
  );
});

test('providers.*.headers: names must be tokens, values free of CR/LF, and auth or framing headers are refused', () => {
  const withHeaders = (headers: string) => `providers:\n  p: { type: openai, exchange_rate: 1.0, headers: ${headers} }\n`;
  assert.deepEqual(parseHerdConfig(withHeaders('{ openai-organization: org-1 }'), 'h.yaml', {}).providers.p?.headers, { 'openai-organization': 'org-1' });
  for (const [headers, expected] of [
    ['{ Authorization: "Bearer x" }', /Authorization: is set by Herd itself/],
    ['{ X-Api-Key: k }', /X-Api-Key: is set by Herd itself/],
    ['{ "bad name": v }', /must be an HTTP header name/],
    ['{ x-note: "a\\r\\nx-injected: 1" }', /x-note: must not contain CR, LF or NUL/],
  ] as const) {
    assert.match(problems(withHeaders(headers)).join('\n'), expected, headers);
  }
});

test('embedding models: kinds may not mix in fallbacks or tiers, dimensions needs kind embedding, anthropic cannot embed', () => {
  const lines = problems(`${base}
models:
  emb:
    kind: embedding
    price: { input: 0.02, output: 0 }
    deployments: [{ provider: anthropic }]
    fallbacks: [chat]
  chat:
    dimensions: 8
    price: { input: 1, output: 2 }
    deployments: [{ provider: openai }]
routes:
  tiers: { fast: emb }
`);
  const paths = lines.map((l) => l.replace(/^h\.yaml:\d+:\d+: /, ''));
  assert.deepEqual(paths.sort(), [
    'models.chat.dimensions: only valid for kind: embedding',
    "models.emb.deployments[0].provider: 'anthropic' is type anthropic, which has no embeddings API",
    "models.emb.fallbacks[0]: 'chat' is a chat model and cannot stand in for this embedding model",
    "routes.tiers.fast: 'emb' is an embedding model; tiers route chat requests",
  ]);
  const ok = parseHerdConfig(
    `${base}\nmodels:\n  emb: { kind: embedding, dimensions: 256, price: { input: 0.02, output: 0 }, deployments: [{ provider: openai }] }\n`,
    'h.yaml',
    {},
  );
  assert.equal(ok.models.emb?.kind, 'embedding');
  assert.equal(ok.models.emb?.dimensions, 256);
});

test('routes.patterns: globs checked at load, each error at its line and column', () => {
  const lines = problems(`${base}
models:
  claude:
    aliases: [sonnet]
    price: { input: 3, output: 15 }
    deployments: [{ provider: anthropic, upstream_model: '{model}' }, { provider: holysheep, upstream_model: 'x-{id}' }]
routes:
  patterns:
    - { match: 'claude-*', model: sonnet }
    - { match: 'claude-opus-*', model: claude }
    - { match: gpt-5, model: claude }
    - { match: 'gpt-5*', model: gpt-5 }
`);
  assert.deepEqual(lines, [
    'h.yaml:10:110: models.claude.deployments[1].upstream_model: the only placeholder is {model} (the id the client asked for)',
    "h.yaml:14:16: routes.patterns[1].match: can never match: routes.patterns[0] ('claude-*') comes first and matches every id this one does",
    "h.yaml:15:16: routes.patterns[2].match: 'gpt-5' has no * or ?: an exact id is an alias (models.<name>.aliases)",
    "h.yaml:16:33: routes.patterns[3].model: unknown model 'gpt-5' (known: claude)",
  ]);
});

test('routes.patterns: a valid list keeps its order; upstream_model may hold {model}', () => {
  const c = parseHerdConfig(
    `${base}
models:
  claude:
    price: { input: 3, output: 15 }
    deployments: [{ provider: anthropic, upstream_model: '{model}' }]
routes:
  patterns:
    - { match: 'claude-opus-*', model: claude }
    - { match: 'claude-*', model: claude }
`,
    'h.yaml',
    {},
  );
  assert.deepEqual(
    c.routes.patterns.map((p) => p.match),
    ['claude-opus-*', 'claude-*'],
  );
  assert.equal(c.models.claude!.deployments[0]!.upstream_model, '{model}');
});
