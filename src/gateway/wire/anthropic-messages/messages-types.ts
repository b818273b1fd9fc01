// Anthropic Messages wire shapes as Herd answers them on its own /v1/messages (the ingress side):
// the Message object, its content blocks and usage. The upstream side's types are in providers/anthropic/.

export type MessagesStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

export interface MessagesTextBlock {
  type: 'text';
  text: string;
}

export interface MessagesThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface MessagesToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export type MessagesResponseBlock = MessagesTextBlock | MessagesThinkingBlock | MessagesToolUseBlock;

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: MessagesResponseBlock[];
  stop_reason: MessagesStopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}
