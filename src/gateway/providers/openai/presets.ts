// Known OpenAI-compatible upstreams: base URL and the environment variable that holds the key.
// The config layer offers these as defaults for `type: openai` providers of the same name.

export interface OpenAICompatiblePreset {
  baseUrl: string;
  apiKeyEnv: string;
}

export const OPENAI_COMPATIBLE_PRESETS: Readonly<Record<'holysheep' | 'openai' | 'deepseek', OpenAICompatiblePreset>> = {
  holysheep: { baseUrl: 'https://api.holysheep.ai/v1', apiKeyEnv: 'HOLYSHEEP_API_KEY' },
  openai: { baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY' },
  // DeepSeek serves the OpenAI paths at its root (https://api.deepseek.com/chat/completions).
  deepseek: { baseUrl: 'https://api.deepseek.com', apiKeyEnv: 'DEEPSEEK_API_KEY' },
};
