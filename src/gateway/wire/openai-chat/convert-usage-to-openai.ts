// Normalised Usage back to OpenAI's wire `usage` object, so every provider answers with the same shape.
import type { ChatUsage, Usage } from '../../protocol/chat-types.ts';

export function convertUsageToOpenAI(usage: Usage): ChatUsage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedPromptTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}
