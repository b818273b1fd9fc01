// Normalised Usage -> Anthropic's usage object: Anthropic counts input_tokens without the cache reads
// and cache writes that Herd's promptTokens includes (the inverse of providers/anthropic/convert-anthropic-usage.ts).
import type { Usage } from '../../protocol/chat-types.ts';
import type { MessagesUsage } from './messages-types.ts';

export function convertUsageToMessages(usage: Usage): MessagesUsage {
  return {
    input_tokens: Math.max(0, usage.promptTokens - usage.cachedPromptTokens - usage.cacheWriteTokens),
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cachedPromptTokens,
  };
}
