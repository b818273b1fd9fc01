// Known OpenAI-compatible upstreams: base URL, the environment variable that holds the key, and the
// endpoints besides chat they offer. The config layer offers these as defaults for `type: openai`
// providers of the same name.
import type { OpenAIExtraEndpoint } from '../../../config/gateway-config-schema.ts';

export interface OpenAICompatiblePreset {
  baseUrl: string;
  apiKeyEnv: string;
  endpoints: readonly OpenAIExtraEndpoint[];
}

export const OPENAI_COMPATIBLE_PRESETS: Readonly<Record<'holysheep' | 'openai' | 'deepseek', OpenAICompatiblePreset>> = {
  // A relay in front of several makers: chat is what every model behind it answers.
  holysheep: { baseUrl: 'https://api.holysheep.ai/v1', apiKeyEnv: 'HOLYSHEEP_API_KEY', endpoints: [] },
  openai: { baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', endpoints: ['responses', 'completions'] },
  // DeepSeek serves the OpenAI paths at its root (https://api.deepseek.com/chat/completions); it has no
  // Responses API, and its /completions (FIM) is on the /beta base URL only.
  deepseek: { baseUrl: 'https://api.deepseek.com', apiKeyEnv: 'DEEPSEEK_API_KEY', endpoints: [] },
};
