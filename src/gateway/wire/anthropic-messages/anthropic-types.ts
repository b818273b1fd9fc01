// Anthropic Messages API wire shapes (POST /v1/messages, anthropic-version 2023-06-01), only as far
// as Herd reads or writes them. Response-side types are loose: unknown block and event types exist.
import type { CacheControl, JsonSchema, ThinkingConfig } from '../../protocol/chat-types.ts';

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}

export interface AnthropicImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
}

export interface AnthropicToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | AnthropicTextBlock[];
}

/** A replayed thinking block: Anthropic checks the signature, so only a signed one is sent back. */
export interface AnthropicThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicToolUseBlock | AnthropicToolResultBlock | AnthropicThinkingBlock;

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: AnthropicContentBlock[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonSchema;
}

export type AnthropicToolChoice = { type: 'auto' | 'any' | 'none'; disable_parallel_tool_use?: boolean } | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean };

export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: AnthropicTextBlock[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  thinking?: ThinkingConfig;
  /** How much the model spends (thinking included): Claude's effort levels. */
  output_config?: { effort: string };
  cache_control?: CacheControl;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id: string };
  stream?: boolean;
}

export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  [other: string]: unknown;
}

/** A response content block: text, tool_use, thinking, redacted_thinking, or a type added later. */
export interface AnthropicResponseBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  thinking?: string;
  signature?: string;
}

export interface AnthropicResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicResponseBlock[];
  stop_reason: string | null;
  stop_sequence?: string | null;
  usage: AnthropicUsage;
}

/**
 * Anthropic requires max_tokens; OpenAI clients usually omit it. 4096 is the default the Vercel AI
 * SDK and LiteLLM used for Claude for years, and every current Claude model accepts it; providers can
 * configure another. Herd never lowers a value the client set.
 */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;
