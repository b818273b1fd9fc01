// Where a configured provider lives and which variable holds its key, when herd.yaml leaves them
// out: the OpenAI-compatible preset of the same name, the official API of its type, `<NAME>_API_KEY`;
// and which OpenAI endpoints besides chat it offers.
import type { OpenAIExtraEndpoint, ProviderConfig } from '../../config/gateway-config-schema.ts';
import { OPENAI_COMPATIBLE_PRESETS, type OpenAICompatiblePreset } from '../providers/openai/presets.ts';

const OFFICIAL_BASE_URLS: Readonly<Record<'anthropic' | 'gemini', string>> = {
  anthropic: 'https://api.anthropic.com',
  gemini: 'https://generativelanguage.googleapis.com',
};

export interface ProviderEndpoint {
  /** Undefined when neither herd.yaml nor a preset gives one (the provider is then disabled). */
  baseUrl: string | undefined;
  apiKeyEnv: string;
  /** openai: the endpoints besides chat the upstream offers (pass-through targets); empty for other types. */
  endpoints: readonly OpenAIExtraEndpoint[];
}

export function resolveProviderEndpoint(name: string, config: Pick<ProviderConfig, 'type' | 'base_url' | 'api_key_env' | 'endpoints'>): ProviderEndpoint {
  const preset: OpenAICompatiblePreset | undefined = Object.hasOwn(OPENAI_COMPATIBLE_PRESETS, name)
    ? OPENAI_COMPATIBLE_PRESETS[name as keyof typeof OPENAI_COMPATIBLE_PRESETS]
    : undefined;
  // triton has no official URL: without base_url it is this Herd's own repository.
  const officialUrl = config.type === 'openai' ? preset?.baseUrl : config.type === 'triton' ? undefined : OFFICIAL_BASE_URLS[config.type];
  return {
    baseUrl: config.base_url ?? officialUrl,
    // A triton server usually takes no key: none unless herd.yaml names its variable.
    apiKeyEnv: config.api_key_env ?? preset?.apiKeyEnv ?? (config.type === 'triton' ? '' : `${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_API_KEY`),
    // A preset's endpoints describe its own URL: a base_url elsewhere offers only what herd.yaml says.
    endpoints: config.type !== 'openai' ? [] : (config.endpoints ?? (config.base_url === undefined || config.base_url === preset?.baseUrl ? preset?.endpoints : undefined) ?? []),
  };
}

export function describeMissingBaseUrl(name: string): string {
  return `base_url is not set and there is no preset named '${name}' (presets: ${Object.keys(OPENAI_COMPATIBLE_PRESETS).join(', ')})`;
}
