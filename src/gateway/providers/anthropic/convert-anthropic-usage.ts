// Anthropic usage -> normalised Usage, counted the way OpenAI counts prompt tokens.
import type { Usage } from '../../chat-types.ts';
import { countTokens } from '../../usage-estimate.ts';
import type { AnthropicUsage } from './anthropic-types.ts';

/**
 * Anthropic's input_tokens excludes cache reads and cache writes, while OpenAI's prompt_tokens includes
 * cached tokens: promptTokens = input + cache read + cache write. Anthropic reports no separate
 * thinking count (thinking is inside output_tokens): reasoningTokens is 0 until countAnthropicReasoning.
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

/**
 * Sets reasoningTokens to Herd's count of the thinking text (o200k_base, so an approximation of Claude's
 * tokenizer), never above the completion tokens it is part of. reportedReasoningTokens stays undefined:
 * Anthropic reports none. Redacted thinking is encrypted and cannot be counted.
 */
export async function countAnthropicReasoning(usage: Usage, thinking: string): Promise<Usage> {
  if (thinking === '') return usage;
  usage.reasoningTokens = Math.min(await countTokens(thinking), usage.completionTokens);
  return usage;
}
