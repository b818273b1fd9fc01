// Anthropic usage -> normalised Usage, counted the way OpenAI counts prompt tokens.
import type { Usage } from '../../chat-types.ts';
import type { AnthropicUsage } from './anthropic-types.ts';

/**
 * Anthropic's input_tokens excludes cache reads and cache writes, while OpenAI's prompt_tokens includes
 * cached tokens: promptTokens = input + cache read + cache write. Anthropic reports no separate
 * thinking count (thinking is inside output_tokens), so reasoningTokens is 0.
 */
export function convertAnthropicUsage(raw: AnthropicUsage): Usage {
  const cacheRead = raw.cache_read_input_tokens ?? 0;
  const cacheWrite = raw.cache_creation_input_tokens ?? 0;
  return {
    promptTokens: (raw.input_tokens ?? 0) + cacheRead + cacheWrite,
    cachedPromptTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    completionTokens: raw.output_tokens ?? 0,
    reasoningTokens: 0,
    estimated: false,
    raw,
  };
}
