// Anthropic usage -> normalised Usage, counted the way OpenAI counts prompt tokens.
import type { Usage } from '../../protocol/chat-types.ts';
import { countTokens } from '../../protocol/usage-estimate.ts';
import type { AnthropicUsage } from './anthropic-types.ts';

/**
 * Anthropic's input_tokens excludes cache reads and cache writes, while OpenAI's prompt_tokens includes
 * cached tokens: promptTokens = input + cache read + cache write. Anthropic reports no separate
 * thinking count (thinking is inside output_tokens): reasoningTokens is 0 until countAnthropicReasoning.
 */
export function convertAnthropicUsage(raw: AnthropicUsage): Usage {
  const cacheRead = raw.cache_read_input_tokens ?? 0;
  const cacheWrite = raw.cache_creation_input_tokens ?? 0;
  const usage: Usage = {
    promptTokens: (raw.input_tokens ?? 0) + cacheRead + cacheWrite,
    cachedPromptTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    completionTokens: raw.output_tokens ?? 0,
    reasoningTokens: 0,
    estimated: false,
    raw,
  };
  const written1h = readOneHourWrites(raw.cache_creation);
  if (written1h > 0) usage.cacheWrite1hTokens = written1h;
  return usage;
}

/** `cache_creation.ephemeral_1h_input_tokens`: the part of the writes kept for an hour, priced apart (the rest are 5-minute writes). */
function readOneHourWrites(details: unknown): number {
  if (typeof details !== 'object' || details === null) return 0;
  const tokens = (details as { ephemeral_1h_input_tokens?: unknown }).ephemeral_1h_input_tokens;
  return typeof tokens === 'number' && Number.isFinite(tokens) && tokens > 0 ? tokens : 0;
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
