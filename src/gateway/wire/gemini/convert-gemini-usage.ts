// Gemini usageMetadata -> normalised Usage, counted the OpenAI way (reasoning inside completion).
import type { Usage } from '../../protocol/chat-types.ts';
import type { GeminiUsageMetadata } from './gemini-types.ts';

/**
 * totalTokenCount = prompt + candidates + toolUsePrompt + thoughts: Gemini reports thinking outside
 * candidatesTokenCount, so completionTokens = candidates + thoughts; tool-use prompt tokens are input.
 */
export function convertGeminiUsage(raw: GeminiUsageMetadata): Usage {
  const thoughts = raw.thoughtsTokenCount ?? 0;
  const usage: Usage = {
    promptTokens: (raw.promptTokenCount ?? 0) + (raw.toolUsePromptTokenCount ?? 0),
    // promptTokenCount already includes cached content, as OpenAI's prompt_tokens does.
    cachedPromptTokens: raw.cachedContentTokenCount ?? 0,
    cacheWriteTokens: 0,
    completionTokens: (raw.candidatesTokenCount ?? 0) + thoughts,
    reasoningTokens: thoughts,
    estimated: false,
    raw,
  };
  if (raw.thoughtsTokenCount !== undefined) usage.reportedReasoningTokens = raw.thoughtsTokenCount;
  return usage;
}
