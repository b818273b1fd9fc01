// One Provider instance per enabled provider in the catalog (each owns a keep-alive pool), built from
// its type; tests and embedders may hand in their own instances by provider name instead. `type: triton`
// providers without base_url run models through the serving side's InferencePort (app.ts passes it in).
import { UNAVAILABLE_INFERENCE } from '../providers/triton/unavailable-inference.ts';
import type { InferencePort } from '../../core/inference-port.ts';
import { createAnthropicProvider } from '../providers/anthropic/anthropic-provider.ts';
import { createGeminiProvider } from '../providers/gemini/gemini-provider.ts';
import { createOpenAIProvider } from '../providers/openai/openai-provider.ts';
import type { Provider } from '../providers/provider.ts';
import type { ProviderOptions } from '../providers/provider-options.ts';
import { createLocalTritonClient } from '../providers/triton/local-triton-client.ts';
import { createRemoteTritonClient } from '../providers/triton/remote-triton-client.ts';
import { type PromptTemplate, resolvePromptTemplate } from '../providers/triton/render-chat-prompt.ts';
import { createTritonProvider } from '../providers/triton/triton-provider.ts';
import type { CatalogProvider, GatewayCatalog } from '../router/gateway-catalog.ts';

export interface ProviderSet {
  byName: ReadonlyMap<string, Provider>;
  /** The ones created here, which close() must close (injected ones belong to whoever made them). */
  owned: Provider[];
}

export function createProviders(
  catalog: GatewayCatalog,
  env: NodeJS.ProcessEnv,
  injected: Readonly<Record<string, Provider>> = {},
  inference: InferencePort = UNAVAILABLE_INFERENCE,
): ProviderSet {
  const byName = new Map<string, Provider>();
  const owned: Provider[] = [];
  for (const entry of catalog.providers.values()) {
    if (!entry.enabled) continue;
    const given = Object.hasOwn(injected, entry.name) ? injected[entry.name] : undefined;
    if (given !== undefined) {
      byName.set(entry.name, given);
      continue;
    }
    const provider = createProvider(catalog, entry, env, inference);
    byName.set(entry.name, provider);
    owned.push(provider);
  }
  return { byName, owned };
}

function createProvider(catalog: GatewayCatalog, entry: CatalogProvider, env: NodeJS.ProcessEnv, inference: InferencePort): Provider {
  const settings = entry.settings;
  if (entry.type === 'triton') {
    // A triton provider's key is optional: only one herd.yaml names is sent.
    const apiKey = settings.api_key_env !== undefined ? (env[settings.api_key_env] ?? '') : '';
    const timeoutMs = settings.timeout_ms;
    const client =
      entry.baseUrl === undefined
        ? createLocalTritonClient(entry.name, inference)
        : createRemoteTritonClient({ provider: entry.name, baseUrl: entry.baseUrl, headers: settings.headers, apiKey, timeoutMs, connections: settings.limits.concurrency });
    return createTritonProvider({ name: entry.name, client, timeoutMs, templates: deploymentTemplates(catalog, entry.name) });
  }
  const apiKey = env[entry.apiKeyEnv] ?? '';
  const options: ProviderOptions = {
    name: entry.name,
    baseUrl: entry.baseUrl!,
    apiKey,
    headers: settings.headers,
    timeoutMs: settings.timeout_ms,
    // The account's concurrency limit bounds the sockets; requests beyond it queue in the pool.
    connections: settings.limits.concurrency,
  };
  switch (entry.type) {
    case 'openai':
      return createOpenAIProvider({ ...options, endpoints: entry.endpoints });
    case 'anthropic':
      return createAnthropicProvider({ ...options, defaultMaxTokens: settings.default_max_tokens });
    case 'gemini':
      return createGeminiProvider({ ...options, apiVersion: settings.api_version });
  }
}

/** herd.yaml's prompt_template of each deployment of one provider, by upstream model. */
function deploymentTemplates(catalog: GatewayCatalog, provider: string): Map<string, PromptTemplate> {
  const templates = new Map<string, PromptTemplate>();
  for (const model of catalog.models.values()) {
    for (const deployment of model.deployments) {
      if (deployment.provider.name === provider && deployment.promptTemplate !== undefined) {
        templates.set(deployment.upstreamModel, resolvePromptTemplate(deployment.promptTemplate));
      }
    }
  }
  return templates;
}
