// One Provider instance per enabled provider in the catalog (each owns a keep-alive pool), built from
// its type; tests and embedders may hand in their own instances by provider name instead.
import { createAnthropicProvider } from './providers/anthropic/anthropic-provider.ts';
import { createGeminiProvider } from './providers/gemini/gemini-provider.ts';
import { createOpenAIProvider } from './providers/openai/openai-provider.ts';
import type { Provider } from './providers/provider.ts';
import type { ProviderOptions } from './providers/provider-options.ts';
import type { CatalogProvider, GatewayCatalog } from './router/gateway-catalog.ts';

export interface ProviderSet {
  byName: ReadonlyMap<string, Provider>;
  /** The ones created here, which close() must close (injected ones belong to whoever made them). */
  owned: Provider[];
}

export function createProviders(catalog: GatewayCatalog, env: NodeJS.ProcessEnv, injected: Readonly<Record<string, Provider>> = {}): ProviderSet {
  const byName = new Map<string, Provider>();
  const owned: Provider[] = [];
  for (const entry of catalog.providers.values()) {
    if (!entry.enabled) continue;
    const given = Object.hasOwn(injected, entry.name) ? injected[entry.name] : undefined;
    if (given !== undefined) {
      byName.set(entry.name, given);
      continue;
    }
    const provider = createProvider(entry, env[entry.apiKeyEnv] ?? '');
    byName.set(entry.name, provider);
    owned.push(provider);
  }
  return { byName, owned };
}

function createProvider(entry: CatalogProvider, apiKey: string): Provider {
  const settings = entry.settings;
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
      return createOpenAIProvider(options);
    case 'anthropic':
      return createAnthropicProvider({ ...options, defaultMaxTokens: settings.default_max_tokens });
    case 'gemini':
      return createGeminiProvider({ ...options, apiVersion: settings.api_version });
  }
}
