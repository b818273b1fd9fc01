// The gateway's model catalog, built once from validated config and the environment: providers
// (enabled, or disabled with the reason), models with their deployments, names and aliases, routes.
import { parseModelPattern } from '../../config/parse-model-pattern.ts';
import {
  MODEL_PLACEHOLDER,
  type AutoRule,
  type GatewayConfig,
  type ModelKind,
  type OpenAIExtraEndpoint,
  type PriceConfig,
  type PromptTemplateConfig,
  type ProviderConfig,
  type ProviderType,
  type RoutingStrategy,
  type TierName,
} from '../../config/gateway-config-schema.ts';
import { describeMissingBaseUrl, resolveProviderEndpoint } from './resolve-provider-endpoint.ts';

export type GatewayRoutingConfig = Pick<GatewayConfig, 'providers' | 'models' | 'routes'>;

export interface CatalogProvider {
  name: string;
  type: ProviderType;
  /** triton: undefined means this Herd's own repository, in process. */
  baseUrl: string | undefined;
  /** Empty for a triton provider that names no key variable. */
  apiKeyEnv: string;
  /** openai: the endpoints besides chat its upstream offers (resolved from herd.yaml and the preset). */
  endpoints: readonly OpenAIExtraEndpoint[];
  enabled: boolean;
  /** Why the provider is disabled (e.g. `OPENAI_API_KEY is not set`). */
  disabledReason?: string;
  settings: ProviderConfig;
}

export interface CatalogDeployment {
  /** `provider/upstream_model`: the breaker's and the load statistics' key. */
  key: string;
  /** The public model this deployment serves. */
  model: string;
  provider: CatalogProvider;
  /** As herd.yaml says it: may hold `{model}` (see resolveUpstreamModel). */
  upstreamModel: string;
  /** The list price that applies: the deployment's own, else the model's (USD per million tokens). */
  price: PriceConfig;
  weight: number;
  /** triton deployments: the prompt template herd.yaml sets for this deployment. */
  promptTemplate: PromptTemplateConfig | undefined;
}

/** What a triton deployment costs when herd.yaml names no price: a local model is usually free. */
const ZERO_PRICE: PriceConfig = { input: 0, output: 0 };

export interface CatalogModel {
  name: string;
  /** Which endpoint serves it: chat completions or embeddings. */
  kind: ModelKind;
  /** Embedding models: the vectors' length, up to which a request's `dimensions` may shorten them. */
  dimensions: number | undefined;
  aliases: string[];
  contextWindow: number | undefined;
  strategy: RoutingStrategy;
  /** Canonical model names (aliases in herd.yaml resolved). */
  fallbacks: string[];
  msPerToken: number | undefined;
  /** Refuse, rather than drop, what a bridged attempt cannot carry (models.<name>.strict). */
  strict: boolean;
  deployments: CatalogDeployment[];
  /** Deployments whose provider is enabled. */
  enabledDeployments: CatalogDeployment[];
  /** Why each other deployment cannot be used (`openai: OPENAI_API_KEY is not set`). */
  unavailableReasons: string[];
}

/** routes.patterns, in order: a model id matching `glob` routes to `model` (canonical). */
export interface CatalogPattern {
  glob: string;
  model: string;
  test(id: string): boolean;
}

export interface GatewayCatalog {
  providers: ReadonlyMap<string, CatalogProvider>;
  models: ReadonlyMap<string, CatalogModel>;
  /** Tier name → canonical model name, for the tiers that are set. */
  tiers: ReadonlyMap<TierName, string>;
  autoRules: readonly AutoRule[];
  patterns: readonly CatalogPattern[];
  deadlineMs: number;
  /** A model by its name or one of its aliases. */
  findModel(nameOrAlias: string): CatalogModel | undefined;
  /** The first pattern `id` matches. */
  findPattern(id: string): CatalogPattern | undefined;
}

/**
 * The id an attempt on `deployment` sends upstream: its upstream_model with `{model}` replaced by
 * `clientId` (the id a pattern route took in) or else by the model's own name.
 */
export function resolveUpstreamModel(deployment: CatalogDeployment, clientId?: string): string {
  const template = deployment.upstreamModel;
  return template.includes(MODEL_PLACEHOLDER) ? template.replaceAll(MODEL_PLACEHOLDER, clientId ?? deployment.model) : template;
}

export function buildGatewayCatalog(config: GatewayRoutingConfig, env: NodeJS.ProcessEnv): GatewayCatalog {
  const providers = new Map<string, CatalogProvider>();
  for (const [name, settings] of Object.entries(config.providers)) {
    const endpoint = resolveProviderEndpoint(name, settings);
    let disabledReason: string | undefined;
    if (settings.type === 'triton') {
      // No base_url is this Herd's own repository; a key is only needed when herd.yaml names one.
      if (settings.api_key_env !== undefined && !env[settings.api_key_env]) disabledReason = `${settings.api_key_env} is not set`;
    } else if (endpoint.baseUrl === undefined) disabledReason = describeMissingBaseUrl(name);
    else if (!env[endpoint.apiKeyEnv]) disabledReason = `${endpoint.apiKeyEnv} is not set`;
    providers.set(name, {
      name,
      type: settings.type,
      baseUrl: endpoint.baseUrl,
      apiKeyEnv: endpoint.apiKeyEnv,
      endpoints: endpoint.endpoints,
      enabled: disabledReason === undefined,
      disabledReason,
      settings,
    });
  }

  const byName = new Map<string, string>();
  for (const [name, model] of Object.entries(config.models)) {
    byName.set(name, name);
    for (const alias of model.aliases) byName.set(alias, name);
  }
  const canonical = (nameOrAlias: string): string => {
    const name = byName.get(nameOrAlias);
    // Config validation rejects unknown references; reaching this means an unvalidated config.
    if (name === undefined) throw new Error(`unknown model '${nameOrAlias}' in gateway config`);
    return name;
  };

  const models = new Map<string, CatalogModel>();
  for (const [name, model] of Object.entries(config.models)) {
    const deployments: CatalogDeployment[] = model.deployments.map((d) => {
      const provider = providers.get(d.provider);
      const price = d.price ?? model.price ?? (provider?.type === 'triton' ? ZERO_PRICE : undefined);
      if (provider === undefined || price === undefined) throw new Error(`model '${name}': unvalidated deployment of '${d.provider}'`);
      const upstreamModel = d.upstream_model ?? name;
      return { key: `${provider.name}/${upstreamModel}`, model: name, provider, upstreamModel, price, weight: d.weight, promptTemplate: d.prompt_template };
    });
    const enabledDeployments = deployments.filter((d) => d.provider.enabled);
    const unavailableReasons = deployments.filter((d) => !d.provider.enabled).map((d) => `${d.provider.name}: ${d.provider.disabledReason ?? 'disabled'}`);
    models.set(name, {
      name,
      kind: model.kind,
      dimensions: model.dimensions,
      aliases: [...model.aliases],
      contextWindow: model.context_window,
      strategy: model.strategy,
      fallbacks: model.fallbacks.map(canonical),
      msPerToken: model.ms_per_token,
      strict: model.strict,
      deployments,
      enabledDeployments,
      unavailableReasons,
    });
  }

  const tiers = new Map<TierName, string>();
  for (const [tier, target] of Object.entries(config.routes.tiers) as Array<[TierName, string | undefined]>) {
    if (target !== undefined) tiers.set(tier, canonical(target));
  }
  const patterns: CatalogPattern[] = (config.routes.patterns ?? []).map((p) => ({ ...parseModelPattern(p.match), model: canonical(p.model) }));
  return {
    providers,
    models,
    tiers,
    autoRules: config.routes.auto,
    patterns,
    deadlineMs: config.routes.deadline_ms,
    findModel: (nameOrAlias) => {
      const name = byName.get(nameOrAlias);
      return name === undefined ? undefined : models.get(name);
    },
    findPattern: (id) => patterns.find((p) => p.test(id)),
  };
}
