// The canonical chat shapes every part of the gateway speaks: OpenAI's Chat Completions wire format
// as domain types, plus Herd's normalised Usage. Providers translate to and from these; nothing else.

export type ChatRole = 'system' | 'developer' | 'user' | 'assistant' | 'tool';

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImageUrlPart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}

/** OpenAI lets an assistant message replay a refusal as a content part. */
export interface RefusalPart {
  type: 'refusal';
  refusal: string;
}

export type UserContentPart = TextPart | ImageUrlPart;

export interface FunctionToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A call of a custom (freeform) tool: its input is free text, not JSON arguments. OpenAI upstreams only. */
export interface CustomToolCall {
  id: string;
  type: 'custom';
  custom: { name: string; input: string };
}

export type ToolCall = FunctionToolCall | CustomToolCall;

export interface SystemMessage {
  role: 'system' | 'developer';
  content: string | TextPart[];
  name?: string;
}

export interface UserMessage {
  role: 'user';
  content: string | UserContentPart[];
  name?: string;
}

export interface AssistantMessage {
  role: 'assistant';
  /** null (or absent on the wire) only when tool_calls carries the turn. */
  content: string | Array<TextPart | RefusalPart> | null;
  name?: string;
  tool_calls?: ToolCall[];
  refusal?: string | null;
  /** DeepSeek thinking mode wants its reasoning replayed within a tool-call loop; others drop it. */
  reasoning_content?: string;
  /** Anthropic's signature over reasoning_content: with it, Anthropic upstreams take the thinking back. */
  reasoning_signature?: string;
}

export interface ToolMessage {
  role: 'tool';
  content: string | TextPart[];
  tool_call_id: string;
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** JSON Schema as the client sent it; providers pass it on without interpreting it. */
export type JsonSchema = Record<string, unknown>;

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonSchema; strict?: boolean };
}

/** What a custom tool's input must look like: free text, or text a grammar accepts. */
export type CustomToolFormat = { type: 'text' } | { type: 'grammar'; grammar: { definition: string; syntax: 'lark' | 'regex' } };

/** OpenAI's custom (freeform) tool: the model calls it with free text. OpenAI upstreams only. */
export interface CustomTool {
  type: 'custom';
  custom: { name: string; description?: string; format?: CustomToolFormat };
}

export type ChatTool = FunctionTool | CustomTool;

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } } | { type: 'custom'; custom: { name: string } };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; json_schema: { name: string; description?: string; schema?: JsonSchema; strict?: boolean } };

/** A validated request body (see validate-chat-request.ts). Absent and JSON null both end up absent. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  temperature?: number;
  top_p?: number;
  /** Deprecated by OpenAI in favour of max_completion_tokens; providers use max_completion_tokens ?? max_tokens. */
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  n?: number;
  tools?: ChatTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ResponseFormat;
  user?: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean; include_obfuscation?: boolean };
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
  logprobs?: boolean;
  top_logprobs?: number;
  logit_bias?: Record<string, number>;
  reasoning_effort?: string;
  metadata?: Record<string, string>;
  store?: boolean;
  service_tier?: string;
  /** OpenAI prompt-cache routing hint. */
  prompt_cache_key?: string;
  /** OpenAI's stable end-user id for abuse detection (successor of `user`). */
  safety_identifier?: string;
  /** OpenAI GPT-5 output verbosity: low | medium | high. */
  verbosity?: string;
  /** Sample only from the k likeliest tokens (Anthropic Messages ingress); sent to Anthropic upstreams only. */
  top_k?: number;
  /** Anthropic extended thinking (Anthropic Messages ingress); sent to Anthropic upstreams only. */
  thinking?: ThinkingConfig;
  /**
   * Anthropic prompt caching (Anthropic Messages ingress): sent to Anthropic upstreams as the top-level
   * automatic cache_control, which marks the last cacheable block; block-level breakpoints become this.
   */
  cache_control?: CacheControl;
  /** The client's anthropic-version / anthropic-beta headers (Anthropic Messages ingress), forwarded unchanged to Anthropic upstreams only. */
  anthropic_headers?: AnthropicClientHeaders;
  /**
   * Members of the client's body that this canonical shape does not carry, in the client's own dotted paths.
   * A same-dialect upstream gets them anyway (it receives the client's body); a bridged attempt drops each
   * `drop` one, naming it in x-herd-dropped, and refuses a `refuse` one (docs/gateway.md, "Field tables").
   */
  unmodeled?: UnmodeledField[];
}

/** One member of a client request that only a same-dialect upstream can honour. */
export interface UnmodeledField {
  /** The client dialect's own path, e.g. `client_metadata`, `tools.2`, `messages.0.content.1`. */
  param: string;
  /** drop: the answer is still what the client asked for without it; refuse: it would not be. */
  bridged: 'drop' | 'refuse';
  /** Why, for the warning or the refusal (e.g. "hosted tool web_search runs only on OpenAI's Responses API"). */
  reason: string;
  /** The member as the client sent it (a reference into its body): part of the cache key. */
  value: unknown;
}

/** Anthropic's thinking settings, as its Messages API takes them (manual budget, adaptive, between tools, off). */
export type ThinkingConfig =
  | { type: 'enabled'; budget_tokens: number; display?: 'summarized' | 'omitted' }
  | { type: 'adaptive'; display?: 'summarized' | 'omitted' }
  | { type: 'between_tools' }
  | { type: 'disabled' };

export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface AnthropicClientHeaders {
  version?: string;
  beta?: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

/** `usage` as OpenAI puts it on the wire; built from Usage by convertUsageToOpenAI. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

export interface ChatResponseMessage {
  role: 'assistant';
  content: string | null;
  refusal?: string | null;
  tool_calls?: ToolCall[];
  /** DeepSeek's field for reasoning text; also where Anthropic thinking and Gemini thoughts land. */
  reasoning_content?: string;
  /** Anthropic's signature over the thinking (see AssistantMessage.reasoning_signature). */
  reasoning_signature?: string;
}

export interface ChatChoice {
  index: number;
  message: ChatResponseMessage;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

/** An OpenAI `chat.completion` object. */
export interface ChatResponse {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: ChatUsage;
  system_fingerprint?: string | null;
  service_tier?: string | null;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function' | 'custom';
  function?: { name?: string; arguments?: string };
  /** A custom tool call's name and input pieces (`type: 'custom'`). */
  custom?: { name?: string; input?: string };
}

export interface ChatChunkDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ToolCallDelta[];
  reasoning_content?: string | null;
  /** Anthropic's signature over the thinking streamed so far, sent once at the end of a thinking block. */
  reasoning_signature?: string;
}

export interface ChatChunkChoice {
  index: number;
  delta: ChatChunkDelta;
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

/**
 * An OpenAI `chat.completion.chunk`. Providers never put usage on chunks (it travels as its own
 * stream event); the HTTP layer adds the usage-only chunk when the client asked for include_usage.
 */
export interface ChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: ChatUsage | null;
  system_fingerprint?: string | null;
}

/**
 * Token usage normalised across upstream dialects, counted the way OpenAI counts:
 * promptTokens includes cached reads and cache writes; completionTokens includes reasoning.
 */
export interface Usage {
  promptTokens: number;
  /** Prompt tokens served from a cache (billed at the cached-input price). */
  cachedPromptTokens: number;
  /** Prompt tokens written to a cache (Anthropic's cache_creation_input_tokens); 0 elsewhere. */
  cacheWriteTokens: number;
  completionTokens: number;
  /** Completion tokens spent on reasoning/thinking, where the upstream reports them. */
  reasoningTokens: number;
  /** Of cacheWriteTokens, those written for 1 hour (Anthropic's ephemeral_1h), priced at the 1-hour write rate. */
  cacheWrite1hTokens?: number;
  /**
   * The reasoning figure as the upstream reported it, where it reports one apart (OpenAI's reasoning_tokens,
   * Gemini's thoughtsTokenCount); undefined where it does not (Anthropic counts thinking inside output_tokens,
   * and reasoningTokens is then Herd's count of the thinking text).
   */
  reportedReasoningTokens?: number;
  /** True when Herd counted with its own tokenizer because the upstream sent no usage. */
  estimated: boolean;
  /** The upstream's usage object exactly as received (undefined when estimated). */
  raw: unknown;
}
