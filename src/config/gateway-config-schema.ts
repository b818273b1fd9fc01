// The gateway's herd.yaml sections (auth, providers, models, routes) and the cross-reference checks
// between them, each reported at the exact path of the offending value (e.g. models.x.fallbacks[1]).
import { z } from 'zod';
import { affinityConfigSchema } from './affinity-config-schema.ts';
import { coversPattern, isModelGlob } from './parse-model-pattern.ts';

/** Route names a client may send as `model`; no model or alias may take them. */
export const TIER_NAMES = ['fast', 'balanced', 'quality', 'advanced'] as const;
export type TierName = (typeof TIER_NAMES)[number];
export const AUTO_MODEL = 'auto';
const RESERVED_NAMES: ReadonlySet<string> = new Set<string>([AUTO_MODEL, ...TIER_NAMES]);

const positiveInt = z.number().int().positive();
const usdPerMTok = z.number().min(0);
// Model ids travel in JSON bodies and headers (x-herd-model): printable, no whitespace.
const modelId = z.string().regex(/^[^\s]+$/, 'must be a non-empty name without spaces');
/** Headers each provider sets itself: configuring them would send a second auth header or break framing. */
const RESERVED_UPSTREAM_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'anthropic-version',
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'accept',
]);
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name');

/** Where keys live when neither auth.db nor a PostgreSQL ledger says otherwise. */
export const DEFAULT_KEY_STORE = './data/herd.db';

export const authSchema = z.strictObject({
  master_key_env: envName.default('HERD_MASTER_KEY').describe('environment variable holding the admin key (also valid as a client key)'),
  db: z
    .string()
    .min(1)
    .optional()
    .describe(
      "where gateway keys, teams and the audit log are stored: a SQLite file relative to herd.yaml, or postgres://… (default: the ledger's database when billing.ledger is postgres://, else ./data/herd.db)",
    ),
  failed_keys: z
    .strictObject({
      max_per_address: z
        .number()
        .int()
        .min(0)
        .default(20)
        .describe(
          'requests with an incorrect key one client address may send per window; then it gets 429 with Retry-After, whatever key it sends, until the window ends (0: no limit)',
        ),
      window_s: positiveInt.default(60).describe('the window, in seconds, starting at the first incorrect key'),
    })
    .prefault({})
    .describe('Slows key guessing: a per-address count of incorrect keys. Other addresses are not affected; behind a proxy every client shares its address.'),
});

/** A batch API's rate, per million tokens like the realtime one; cache prices it leaves out scale with input. */
export const batchPriceSchema = z.strictObject({
  input: usdPerMTok.describe('per million prompt tokens of a batch line'),
  output: usdPerMTok.describe('per million completion tokens of a batch line'),
  cached_input: usdPerMTok.optional().describe('absent: the realtime cached_input × (batch input ÷ realtime input)'),
  cache_write: usdPerMTok.optional().describe('absent: the realtime cache_write × (batch input ÷ realtime input)'),
  cache_write_1h: usdPerMTok.optional().describe('absent: the realtime cache_write_1h × (batch input ÷ realtime input)'),
});

/** USD per million tokens, as the maker (or a relay) lists it. */
export const priceSchema = z.strictObject({
  input: usdPerMTok.describe('USD per million prompt tokens'),
  output: usdPerMTok.describe('USD per million completion tokens (reasoning included)'),
  cached_input: usdPerMTok.optional().describe("prompt tokens read from the upstream's cache; absent: 0.1 × input on anthropic providers, input elsewhere"),
  cache_write: usdPerMTok.optional().describe('prompt tokens written to a cache for 5 minutes (Anthropic); absent: 1.25 × input on anthropic providers, input elsewhere'),
  cache_write_1h: usdPerMTok.optional().describe('prompt tokens written to a cache for 1 hour (Anthropic); absent: 2 × input on anthropic providers, cache_write elsewhere'),
  batch: batchPriceSchema.optional().describe("lines of a client batch sent to this provider's batch API; absent: these prices less billing.batch_discount for the provider"),
});

const retrySchema = z.strictObject({
  attempts: positiveInt.default(3).describe('attempts on one deployment, the first included, before moving to the next one'),
  base_ms: z.number().int().min(0).default(500).describe('full-jitter exponential backoff: wait random(0, min(cap_ms, base_ms × 2^(n-1))) before retry n'),
  cap_ms: z.number().int().min(0).default(20_000).describe('longest backoff, and the longest Retry-After Herd waits; a longer one moves on to the next deployment'),
});

const breakerSchema = z.strictObject({
  failure_ratio: z.number().gt(0).max(1).default(0.5).describe('the breaker opens when failures ÷ requests in the window reach this ratio...'),
  min_requests: positiveInt.default(5).describe('...over at least this many requests'),
  window_ms: positiveInt.default(60_000).describe('the sliding window the ratio is counted over'),
  cooldown_ms: positiveInt.default(30_000).describe('how long an open breaker refuses requests before one half-open probe is let through'),
});

const PROVIDER_TYPES = ['openai', 'anthropic', 'gemini', 'triton'] as const;

/** OpenAI endpoints beside chat completions that an OpenAI-compatible upstream may offer (pass-through targets). */
export const OPENAI_EXTRA_ENDPOINTS = ['responses', 'completions'] as const;
export type OpenAIExtraEndpoint = (typeof OPENAI_EXTRA_ENDPOINTS)[number];

/** Built-in chat prompt templates of `type: triton` deployments (gateway/providers/triton/render-chat-prompt.ts). */
export const PROMPT_TEMPLATE_PRESETS = ['plain', 'raw', 'chatml', 'llama3'] as const;

const templatePart = z.string().regex(/\{content\}/, 'must contain {content}');
export const promptTemplateSchema = z.union(
  [
    z.enum(PROMPT_TEMPLATE_PRESETS),
    z.strictObject({
      system: templatePart.describe('one system (or developer) message; {content} is its text'),
      user: templatePart.describe('one user message'),
      assistant: templatePart.describe('one earlier assistant message'),
      tool: templatePart.optional().describe('one tool result message (default: the user format)'),
      generation: z.string().default('').describe('appended after the last message: where the model starts its answer'),
    }),
  ],
  { error: `must be a preset (${PROMPT_TEMPLATE_PRESETS.join(', ')}) or { system, user, assistant, tool?, generation? }` },
);

export const providerSchema = z.strictObject({
  type: z
    .enum(PROVIDER_TYPES)
    .describe(
      "the wire format the upstream speaks: OpenAI chat completions, Anthropic Messages, Gemini generateContent, or triton: a Triton model's text_input/text_output contract (this Herd's repository in process, or a remote KServe server at base_url)",
    ),
  base_url: z
    .url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' })
    .optional()
    .describe(
      "default: the preset of the same name (holysheep, openai, deepseek) or the official API of the type; triton: a remote KServe/Triton server's HTTP endpoint (absent: this Herd's own model repository, no HTTP hop)",
    ),
  api_key_env: envName
    .optional()
    .describe(
      'environment variable holding the upstream key; default <NAME>_API_KEY (holysheep: HOLYSHEEP_API_KEY). The provider is disabled while it is unset. triton: optional (sent as a Bearer token when set), no key by default',
    ),
  headers: z
    .record(z.string(), z.string().regex(/^[^\r\n\0]*$/, 'must not contain CR, LF or NUL'))
    // Checked here rather than as the record's key schema, whose issues zod reports only as "Invalid key in record".
    .superRefine((headers, ctx) => {
      for (const name of Object.keys(headers)) {
        if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'must be an HTTP header name' });
        else if (RESERVED_UPSTREAM_HEADERS.has(name.toLowerCase()))
          ctx.addIssue({ code: 'custom', path: [name], message: 'is set by Herd itself (auth, framing) and cannot be configured' });
      }
    })
    .default({})
    .describe(
      "extra headers sent on every upstream request (e.g. openai-organization); client headers are never forwarded, and the provider's auth and framing headers cannot be set here",
    ),
  exchange_rate: z
    .number()
    .positive()
    .default(1)
    .describe('settlement-currency units this provider charges per 1 USD of list price (a ¥1 = $1 relay: 1; an official API paid at ¥7.3/$: 7.3)'),
  timeout_ms: positiveInt.default(60_000).describe('per-attempt timeout of a non-streamed call; for streams, the longest silence between chunks'),
  first_token_timeout_ms: positiveInt.optional().describe('streams: longest wait for the first upstream event (default: timeout_ms)'),
  limits: z
    .strictObject({
      rpm: positiveInt.optional().describe('requests per minute this account allows; more wait in Herd instead of getting 429 upstream'),
      concurrency: positiveInt.optional().describe('calls in flight at once on this account'),
    })
    .default({})
    .describe("the provider account's own limits"),
  retry: retrySchema.prefault({}).describe('retries on 429, 5xx, timeouts and connection errors'),
  breaker: breakerSchema.prefault({}).describe('circuit breaker per upstream model (provider/upstream_model)'),
  default_max_tokens: positiveInt.optional().describe('anthropic only: max_tokens sent when the client set none (the Messages API requires one)'),
  api_version: z
    .string()
    .regex(/^v[0-9a-z]+$/)
    .optional()
    .describe('gemini only: API version path segment (default v1beta)'),
  endpoints: z
    .array(z.enum(OPENAI_EXTRA_ENDPOINTS))
    .optional()
    .describe(
      "openai only: the OpenAI endpoints besides /chat/completions this upstream offers; /v1/responses and /v1/completions requests are passed through to it as sent (model renamed) when it offers theirs, and bridged onto its chat completions otherwise. Default: the preset's (openai: [responses, completions]; deepseek, holysheep: none), else none",
    ),
});

export const deploymentSchema = z.strictObject({
  provider: z.string().min(1).describe('a name from providers'),
  upstream_model: z
    .string()
    .min(1)
    .optional()
    .describe(
      "the id the upstream knows (default: the model's name); `{model}` stands for the id the client asked for when it came through routes.patterns (e.g. claude-sonnet-4-5-20250929), the model's name otherwise",
    ),
  price: priceSchema.optional().describe("this provider's own list price, when it differs from the model's (relays sometimes do)"),
  prompt_template: promptTemplateSchema
    .optional()
    .describe(
      "triton providers only: how chat messages become the model's text_input, a preset (plain, raw, chatml, llama3) or { system, user, assistant, tool?, generation }; overrides the model's own prompt_template parameter (default plain)",
    ),
  weight: z.number().positive().default(1).describe('share of traffic under strategy weighted'),
});

export const ROUTING_STRATEGIES = ['cheapest', 'weighted', 'least-busy', 'lowest-latency'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

/** What a model answers: chat completions, or embeddings (POST /v1/embeddings). */
export const MODEL_KINDS = ['chat', 'embedding'] as const;
export type ModelKind = (typeof MODEL_KINDS)[number];

export const modelSchema = z.strictObject({
  kind: z
    .enum(MODEL_KINDS)
    .default('chat')
    .describe(
      'chat: served on /v1/chat/completions; embedding: served on /v1/embeddings (price.input per million input tokens, output 0). Each endpoint refuses the other kind with a 400',
    ),
  dimensions: positiveInt
    .optional()
    .describe(
      "embedding only: the length of the model's vectors; when set, a request's `dimensions` may ask for up to this many (shortened vectors), when unset `dimensions` is refused",
    ),
  aliases: z.array(modelId).default([]).describe('other names clients may send as model'),
  context_window: positiveInt.optional().describe('tokens; shown in /v1/models, and after a context-length error fallbacks with a window no larger are skipped'),
  max_output_tokens: positiveInt
    .optional()
    .describe(
      'the most tokens one answer may have: a key with a budget reserves this much output for a request that sends no max_tokens; absent: billing.default_max_output_tokens',
    ),
  price: priceSchema.optional().describe('USD per million tokens, as the maker lists it'),
  deployments: z.array(deploymentSchema).min(1, 'needs at least one deployment').describe('the providers serving this model'),
  strategy: z.enum(ROUTING_STRATEGIES).default('cheapest').describe('how a deployment is chosen when several are enabled'),
  fallbacks: z.array(modelId).default([]).describe('models (names or aliases) tried in order when every deployment of this one failed'),
  ms_per_token: z.number().positive().optional().describe("scales a non-streamed attempt's timeout with the output: timeout_ms + ms_per_token × max_tokens"),
  strict: z
    .boolean()
    .default(false)
    .describe(
      'true: a request bridged onto another dialect is refused (400 naming the field) when it carries a field the bridge would drop; false: the field is dropped and named in x-herd-dropped (docs/gateway.md, "Field tables")',
    ),
});

const autoRuleSchema = z.strictObject({
  max_prompt_tokens: positiveInt.optional().describe('matches when the estimated prompt is at most this many tokens; a rule without it matches all'),
  tier: z.enum(TIER_NAMES).describe('the tier a matching request goes to'),
});

const routePatternSchema = z.strictObject({
  match: modelId.describe('a model-id glob: `*` any run of characters, `?` one; the whole id must match, case-sensitive'),
  model: modelId.describe('the model (name or alias) a matching id routes to'),
});

export const routesSchema = z.strictObject({
  patterns: z
    .array(routePatternSchema)
    .default([])
    .describe(
      'model ids routed by glob, in order: the first pattern that matches wins; exact names, aliases, tiers and auto are tried before any pattern (docs/gateway.md, "Pattern routes")',
    ),
  tiers: z
    .strictObject({
      fast: modelId.optional().describe('model for model: fast'),
      balanced: modelId.optional().describe('model for model: balanced'),
      quality: modelId.optional().describe('model for model: quality'),
      advanced: modelId.optional().describe('model for model: advanced'),
    })
    .default({})
    .describe('route names a client may send as model'),
  auto: z.array(autoRuleSchema).default([]).describe('model: auto: the first rule that matches picks the tier'),
  deadline_ms: positiveInt.default(120_000).describe('total time for one request across retries and fallbacks (streams: until the first chunk); never shorter than one attempt'),
  affinity: affinityConfigSchema.prefault({}).describe('prompt-cache affinity: a session stays on the deployment that served it last'),
});

/** Spread into herdConfigSchema; pair with `.superRefine(checkGatewayConfig)`. */
export const gatewayConfigShape = {
  auth: authSchema.prefault({}).describe('Who may call the gateway: the admin key and the key store.'),
  providers: z
    .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'provider names are letters, digits, _ . -'), providerSchema)
    .default({})
    .describe('Upstream accounts, by a name of your choice (letters, digits, _ . -).'),
  models: z.record(modelId, modelSchema).default({}).describe('Models clients may ask for, by the name they send, each with its price and deployments.'),
  routes: routesSchema.prefault({}).describe('Route names (tiers, auto), model-id patterns and the per-request deadline.'),
};

export const gatewayConfigSchema = z.strictObject(gatewayConfigShape).superRefine((c, ctx) => checkGatewayConfig(c, ctx));

export type GatewayConfig = z.infer<typeof gatewayConfigSchema>;
export type AuthConfig = GatewayConfig['auth'];
export type ProviderConfig = z.infer<typeof providerSchema>;
export type ProviderType = ProviderConfig['type'];
export type GatewayModelConfig = z.infer<typeof modelSchema>;
export type DeploymentConfig = z.infer<typeof deploymentSchema>;
export type PriceConfig = z.infer<typeof priceSchema>;
export type PromptTemplateConfig = z.infer<typeof promptTemplateSchema>;
export type RoutesConfig = GatewayConfig['routes'];
export type AutoRule = RoutesConfig['auto'][number];

/** In a deployment's upstream_model: the id the client asked for (pattern routes) or the model's name. */
export const MODEL_PLACEHOLDER = '{model}';

type Path = (string | number)[];
interface IssueSink {
  addIssue(issue: { code: 'custom'; path: Path; message: string }): void;
}

/** Checks what a per-field schema cannot see: names that must refer to each other, and routes that can match. */
export function checkGatewayConfig(config: Pick<GatewayConfig, 'providers' | 'models' | 'routes'>, ctx: IssueSink): void {
  const report = (path: Path, message: string) => ctx.addIssue({ code: 'custom', path, message });
  for (const [name, provider] of Object.entries(config.providers)) checkProvider(name, provider, report);

  const providerNames = Object.keys(config.providers);
  const owners = new Map<string, string>(); // name or alias → model
  for (const name of Object.keys(config.models)) {
    owners.set(name, name);
    if (RESERVED_NAMES.has(name)) report(['models', name], `'${name}' is a route name (${[...RESERVED_NAMES].join(', ')}) and cannot name a model`);
  }
  for (const [name, model] of Object.entries(config.models)) {
    model.aliases.forEach((alias, i) => {
      const path = ['models', name, 'aliases', i];
      const owner = owners.get(alias);
      if (RESERVED_NAMES.has(alias)) report(path, `'${alias}' is a route name and cannot be an alias`);
      else if (owner !== undefined) report(path, owner === alias ? `'${alias}' is already the name of a model` : `alias '${alias}' is already used by model '${owner}'`);
      else owners.set(alias, name);
    });
    model.deployments.forEach((deployment, i) => {
      if (!(deployment.provider in config.providers)) {
        report(['models', name, 'deployments', i, 'provider'], `unknown provider '${deployment.provider}' (known: ${listOrNone(providerNames)})`);
      }
      const type = config.providers[deployment.provider]?.type;
      if (model.kind === 'embedding' && type === 'anthropic') {
        report(['models', name, 'deployments', i, 'provider'], `'${deployment.provider}' is type anthropic, which has no embeddings API`);
      }
      if (deployment.prompt_template !== undefined && type !== undefined && type !== 'triton') {
        report(['models', name, 'deployments', i, 'prompt_template'], 'only valid for deployments of a type: triton provider');
      }
      const placeholders = deployment.upstream_model?.match(/\{[^}]*\}/gu) ?? [];
      if (placeholders.some((p) => p !== MODEL_PLACEHOLDER)) {
        report(['models', name, 'deployments', i, 'upstream_model'], `the only placeholder is ${MODEL_PLACEHOLDER} (the id the client asked for)`);
      }
      // A local model's price is often zero: a triton deployment without one is priced at zero.
      if (deployment.price === undefined && model.price === undefined && type !== 'triton') {
        report(['models', name, 'deployments', i], 'no price: set price on the model or on this deployment (USD per million tokens)');
      }
    });
  }
  const knownModels = listOrNone(Object.keys(config.models));
  const kindOf = (model: string) => config.models[model]?.kind ?? 'chat';
  for (const [name, model] of Object.entries(config.models)) {
    if (model.dimensions !== undefined && model.kind !== 'embedding') report(['models', name, 'dimensions'], 'only valid for kind: embedding');
    model.fallbacks.forEach((fallback, i) => {
      const path = ['models', name, 'fallbacks', i];
      const target = owners.get(fallback);
      if (target === undefined) report(path, `unknown model '${fallback}' (known: ${knownModels})`);
      else if (target === name) report(path, `'${fallback}' is this model itself`);
      else if (kindOf(target) !== model.kind) report(path, `'${fallback}' is a ${kindOf(target)} model and cannot stand in for this ${model.kind} model`);
    });
  }
  for (const tier of TIER_NAMES) {
    const target = config.routes.tiers[tier];
    const owner = target === undefined ? undefined : owners.get(target);
    if (target !== undefined && owner === undefined) report(['routes', 'tiers', tier], `unknown model '${target}' (known: ${knownModels})`);
    else if (owner !== undefined && kindOf(owner) !== 'chat') report(['routes', 'tiers', tier], `'${target}' is an embedding model; tiers route chat requests`);
  }
  checkAutoRules(config.routes, report);
  checkRoutePatterns(config.routes, owners, report);
}

function checkProvider(name: string, provider: ProviderConfig, report: (path: Path, message: string) => void): void {
  if (provider.default_max_tokens !== undefined && provider.type !== 'anthropic') {
    report(['providers', name, 'default_max_tokens'], 'only valid for type: anthropic');
  }
  if (provider.api_version !== undefined && provider.type !== 'gemini') {
    report(['providers', name, 'api_version'], 'only valid for type: gemini');
  }
  if (provider.endpoints !== undefined && provider.type !== 'openai') {
    report(['providers', name, 'endpoints'], 'only valid for type: openai');
  }
  if (provider.type === 'triton' && Object.keys(provider.headers).length > 0 && provider.base_url === undefined) {
    report(['providers', name, 'headers'], 'a triton provider without base_url calls this Herd in process: there are no HTTP headers to send');
  }
  if (provider.retry.cap_ms < provider.retry.base_ms) {
    report(['providers', name, 'retry', 'cap_ms'], `must be at least base_ms (${provider.retry.base_ms})`);
  }
}

function checkAutoRules(routes: RoutesConfig, report: (path: Path, message: string) => void): void {
  let previous: number | undefined;
  routes.auto.forEach((rule, i) => {
    const path = ['routes', 'auto', i];
    if (routes.tiers[rule.tier] === undefined) report([...path, 'tier'], `tier '${rule.tier}' is not set in routes.tiers`);
    const isLast = i === routes.auto.length - 1;
    if (rule.max_prompt_tokens === undefined) {
      if (!isLast) report(path, 'a rule without max_prompt_tokens matches everything, so the rules after it can never match');
      return;
    }
    if (previous !== undefined && rule.max_prompt_tokens <= previous) {
      report([...path, 'max_prompt_tokens'], `${rule.max_prompt_tokens} is not above the previous rule's ${previous}, so this rule can never match`);
    }
    previous = rule.max_prompt_tokens;
    if (isLast) report(path, 'the last rule must match every request: leave out max_prompt_tokens (e.g. { tier: quality })');
  });
}

function checkRoutePatterns(routes: RoutesConfig, owners: ReadonlyMap<string, string>, report: (path: Path, message: string) => void): void {
  const known = listOrNone([...new Set(owners.values())]);
  routes.patterns.forEach((pattern, i) => {
    const path = ['routes', 'patterns', i];
    if (!isModelGlob(pattern.match)) {
      report([...path, 'match'], `'${pattern.match}' has no * or ?: an exact id is an alias (models.<name>.aliases)`);
    } else {
      const earlier = routes.patterns.findIndex((p, j) => j < i && coversPattern(p.match, pattern.match));
      if (earlier >= 0) {
        report([...path, 'match'], `can never match: routes.patterns[${earlier}] ('${routes.patterns[earlier]!.match}') comes first and matches every id this one does`);
      }
    }
    if (!owners.has(pattern.model)) report([...path, 'model'], `unknown model '${pattern.model}' (known: ${known})`);
  });
}

function listOrNone(names: string[]): string {
  return names.length === 0 ? 'none configured' : names.join(', ');
}
