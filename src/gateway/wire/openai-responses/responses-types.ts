// OpenAI Responses API wire shapes, the subset Herd speaks (checked against the `openai` SDK's
// resources/responses types): the `response` object, its output items, usage and stream events.

export interface ResponsesOutputText {
  type: 'output_text';
  text: string;
  annotations: unknown[];
  logprobs: unknown[];
}

export interface ResponsesRefusal {
  type: 'refusal';
  refusal: string;
}

export interface ResponsesReasoningText {
  type: 'reasoning_text';
  text: string;
}

/** A reasoning item's readable text: what Responses clients (Codex) show as the model's reasoning. */
export interface ResponsesSummaryText {
  type: 'summary_text';
  text: string;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export interface ResponsesMessageItem {
  type: 'message';
  id: string;
  status: ItemStatus;
  role: 'assistant';
  content: Array<ResponsesOutputText | ResponsesRefusal>;
}

export interface ResponsesFunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  /** A tool of a namespace tool: its namespace (and `name` its own name within it). */
  namespace?: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

/** A call of a custom (freeform) tool: free-text input instead of JSON arguments. */
export interface ResponsesCustomCallItem {
  type: 'custom_tool_call';
  id: string;
  call_id: string;
  namespace?: string;
  name: string;
  input: string;
  status: ItemStatus;
}

/** Reasoning an upstream returns as text (DeepSeek's reasoning_content, Anthropic thinking, Gemini thoughts). */
export interface ResponsesReasoningItem {
  type: 'reasoning';
  id: string;
  /** The reasoning text as one summary part (Anthropic thinking and Gemini thoughts are summaries already). */
  summary: ResponsesSummaryText[];
  content?: ResponsesReasoningText[];
  status: ItemStatus;
}

export type ResponsesOutputItem = ResponsesMessageItem | ResponsesFunctionCallItem | ResponsesCustomCallItem | ResponsesReasoningItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export type ResponseStatus = 'completed' | 'failed' | 'in_progress' | 'incomplete';

export interface ResponsesFunctionTool {
  type: 'function';
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

/** A custom (freeform) tool; `format` as Responses writes it (grammar fields flat, not under `grammar`). */
export interface ResponsesCustomTool {
  type: 'custom';
  name: string;
  description?: string;
  format?: { type: 'text' } | { type: 'grammar'; syntax: 'lark' | 'regex'; definition: string };
}

export type ResponsesTool = ResponsesFunctionTool | ResponsesCustomTool;

export type ResponsesToolChoice = 'none' | 'auto' | 'required' | { type: 'function' | 'custom'; name: string };

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema?: Record<string, unknown>; description?: string; strict?: boolean };

/** The request fields a `response` object echoes back, as the client sent them (defaults filled in). */
export interface ResponsesEcho {
  instructions: string | null;
  max_output_tokens: number | null;
  metadata: Record<string, string>;
  parallel_tool_calls: boolean;
  temperature: number | null;
  top_p: number | null;
  /** As sent when Herd does not model it (allowed_tools, a hosted tool). */
  tool_choice: ResponsesToolChoice | Readonly<Record<string, unknown>>;
  /** Function and custom tools as decoded; namespace, hosted and other tools as sent. */
  tools: Array<ResponsesTool | Readonly<Record<string, unknown>>>;
  text: { format: ResponsesTextFormat; verbosity?: string };
  reasoning: { effort: string | null; summary: string | null };
  truncation: 'auto' | 'disabled';
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
  service_tier?: string;
}

/** A namespace tool's flattened chat name → the namespace and the tool's own name, for restoring them in the answer. */
export type NamespacedNames = Map<string, { namespace: string; name: string }>;

/** What the Responses codec keeps from the request for encoding its answer. */
export interface ResponsesDecoded {
  echo: ResponsesEcho;
  /** Absent without namespace tools. */
  namespaced?: NamespacedNames;
}

/** The `response` object (object: 'response'); `store` is always false: Herd keeps no response state. */
export interface ResponsesResponse extends ResponsesEcho {
  id: string;
  object: 'response';
  created_at: number;
  completed_at: number | null;
  status: ResponseStatus;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  model: string;
  output: ResponsesOutputItem[];
  previous_response_id: null;
  store: false;
  background: false;
  usage: ResponsesUsage | null;
}

/** A stream event before its sequence number is stamped on it. */
export type ResponsesStreamEventBody =
  | { type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete' | 'response.failed'; response: ResponsesResponse }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: ResponsesOutputItem }
  | {
      type: 'response.content_part.added' | 'response.content_part.done';
      item_id: string;
      output_index: number;
      content_index: number;
      part: ResponsesOutputText | ResponsesRefusal | ResponsesReasoningText;
    }
  | { type: 'response.output_text.delta'; item_id: string; output_index: number; content_index: number; delta: string; logprobs: unknown[] }
  | { type: 'response.output_text.done'; item_id: string; output_index: number; content_index: number; text: string; logprobs: unknown[] }
  | { type: 'response.refusal.delta'; item_id: string; output_index: number; content_index: number; delta: string }
  | { type: 'response.refusal.done'; item_id: string; output_index: number; content_index: number; refusal: string }
  | { type: 'response.reasoning_text.delta'; item_id: string; output_index: number; content_index: number; delta: string }
  | { type: 'response.reasoning_text.done'; item_id: string; output_index: number; content_index: number; text: string }
  | {
      type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
      item_id: string;
      output_index: number;
      summary_index: number;
      part: ResponsesSummaryText;
    }
  | { type: 'response.reasoning_summary_text.delta'; item_id: string; output_index: number; summary_index: number; delta: string }
  | { type: 'response.reasoning_summary_text.done'; item_id: string; output_index: number; summary_index: number; text: string }
  | { type: 'response.function_call_arguments.delta'; item_id: string; output_index: number; delta: string }
  | { type: 'response.function_call_arguments.done'; item_id: string; output_index: number; name: string; arguments: string }
  | { type: 'response.custom_tool_call_input.delta'; item_id: string; output_index: number; delta: string }
  | { type: 'response.custom_tool_call_input.done'; item_id: string; output_index: number; input: string };

export type ResponsesStreamEvent = ResponsesStreamEventBody & { sequence_number: number };
