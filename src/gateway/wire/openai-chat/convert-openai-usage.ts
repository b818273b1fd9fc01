// OpenAI-dialect usage (OpenAI, relays, DeepSeek) to normalised Usage, keeping the raw object.
import type { Usage } from '../../protocol/chat-types.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';

/** undefined when the upstream sent no usable usage (the caller then estimates). */
export function convertOpenAIUsage(raw: unknown): Usage | undefined {
  if (!isJsonObject(raw) || typeof raw.prompt_tokens !== 'number' || typeof raw.completion_tokens !== 'number') {
    return undefined;
  }
  const promptDetails = isJsonObject(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const completionDetails = isJsonObject(raw.completion_tokens_details) ? raw.completion_tokens_details : {};
  const usage: Usage = {
    promptTokens: raw.prompt_tokens,
    // OpenAI: prompt_tokens_details.cached_tokens. DeepSeek reports prompt_cache_hit_tokens instead
    // (prompt_tokens = hit + miss there, so the OpenAI meaning holds).
    cachedPromptTokens: numberOr(promptDetails.cached_tokens, numberOr(raw.prompt_cache_hit_tokens, 0)),
    cacheWriteTokens: 0,
    completionTokens: raw.completion_tokens,
    // Already included in completion_tokens, as OpenAI counts.
    reasoningTokens: numberOr(completionDetails.reasoning_tokens, 0),
    estimated: false,
    raw,
  };
  // The upstream's own figure, kept apart from the normalised one (the ledger's reported_reasoning_tokens).
  if (typeof completionDetails.reasoning_tokens === 'number') usage.reportedReasoningTokens = completionDetails.reasoning_tokens;
  return usage;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}
