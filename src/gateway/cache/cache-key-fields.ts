// Every ChatRequest field, classified once: part of the cache key (with its canonical form) or not.
// The mapped type makes a new ChatRequest field a compile error here until someone decides.
//
// Canonical forms make equal requests written differently share an entry. A default is made
// explicit only where every provider Herd speaks to treats the two spellings alike; where one of
// them does not, both spellings stay distinct (see the notes on each field).
import type { AssistantMessage, ChatMessage, ChatRequest, ChatTool, ResponseFormat, TextPart, UserContentPart } from '../protocol/chat-types.ts';

export interface CacheKeyContext {
  /** The canonical model the request resolves to (alias, tier and `auto` already resolved). */
  model: string;
}

export type CacheFieldRule = { role: 'key'; canonical: (request: ChatRequest, context: CacheKeyContext) => unknown } | { role: 'ignored'; why: string };

/** Client-supplied JSON whose key order may matter (see opaqueJson). */
export interface OpaqueJson {
  opaque: string;
}

export const CACHE_KEY_FIELDS: { readonly [K in keyof Required<ChatRequest>]: CacheFieldRule } = {
  // The canonical name, not the one sent: `gpt4`, `gpt-4.1` and a tier pointing at it share entries.
  model: { role: 'key', canonical: (_request, context) => context.model },
  messages: { role: 'key', canonical: (r) => r.messages.map(canonicalMessage) },
  // Not defaulted to 1: Gemini's default temperature is the model's own, not 1.
  temperature: { role: 'key', canonical: (r) => r.temperature },
  // Not defaulted to 1: Gemini 2.5's default topP is 0.95, so absent and 1 differ there.
  top_p: { role: 'key', canonical: (r) => r.top_p },
  // max_tokens and max_completion_tokens stay distinct: the OpenAI provider passes both through
  // unchanged, and some OpenAI-compatible upstreams honour only one of them.
  max_tokens: { role: 'key', canonical: (r) => r.max_tokens },
  max_completion_tokens: { role: 'key', canonical: (r) => r.max_completion_tokens },
  // "x" ≡ ["x"]; [] ≡ absent. Order kept (conservative, though stop is a set).
  stop: { role: 'key', canonical: (r) => nonEmpty(typeof r.stop === 'string' ? [r.stop] : r.stop) },
  // Absent ≡ 1 everywhere.
  n: { role: 'key', canonical: (r) => (r.n === 1 ? undefined : r.n) },
  // [] ≡ absent. Order kept: tools are presented to the model in order.
  tools: { role: 'key', canonical: (r) => nonEmpty(r.tools)?.map(canonicalTool) },
  // With tools, absent ≡ 'auto' (OpenAI's, Anthropic's and Gemini's default).
  tool_choice: { role: 'key', canonical: (r) => (hasTools(r) ? (r.tool_choice ?? 'auto') : undefined) },
  // With tools, absent ≡ true; without tools it means nothing and is dropped.
  parallel_tool_calls: { role: 'key', canonical: (r) => (hasTools(r) ? (r.parallel_tool_calls ?? true) : undefined) },
  // {type: 'text'} ≡ absent.
  response_format: { role: 'key', canonical: (r) => canonicalResponseFormat(r.response_format) },
  seed: { role: 'key', canonical: (r) => r.seed },
  // 0 ≡ absent: no penalty, everywhere.
  presence_penalty: { role: 'key', canonical: (r) => (r.presence_penalty === 0 ? undefined : r.presence_penalty) },
  frequency_penalty: { role: 'key', canonical: (r) => (r.frequency_penalty === 0 ? undefined : r.frequency_penalty) },
  // false ≡ absent. The answer carries logprobs only when asked, so it is part of the key.
  logprobs: { role: 'key', canonical: (r) => (r.logprobs === true ? true : undefined) },
  top_logprobs: { role: 'key', canonical: (r) => r.top_logprobs },
  // {} ≡ absent; token ids are a map, so their order never matters (sorted by the serializer).
  logit_bias: { role: 'key', canonical: (r) => (r.logit_bias && Object.keys(r.logit_bias).length > 0 ? r.logit_bias : undefined) },
  reasoning_effort: { role: 'key', canonical: (r) => r.reasoning_effort },
  verbosity: { role: 'key', canonical: (r) => r.verbosity },
  top_k: { role: 'key', canonical: (r) => r.top_k },
  thinking: { role: 'key', canonical: (r) => r.thinking },
  // A beta can change what the model does; the version names the wire format only.
  anthropic_headers: { role: 'key', canonical: (r) => r.anthropic_headers?.beta },
  // What only a same-dialect upstream sees can still change its answer: two requests differing there do not share.
  unmodeled: { role: 'key', canonical: (r) => r.unmodeled?.map((f) => [f.param, f.value]) },

  stream: { role: 'ignored', why: 'delivery only: a cached answer is replayed as a stream or returned whole' },
  stream_options: { role: 'ignored', why: 'delivery only: include_usage is applied at replay' },
  user: { role: 'ignored', why: 'abuse-tracking id; does not change the answer' },
  safety_identifier: { role: 'ignored', why: 'abuse-tracking id; does not change the answer' },
  metadata: { role: 'ignored', why: 'labels for the upstream dashboard; does not change the answer' },
  store: { role: 'ignored', why: 'whether OpenAI keeps the completion; does not change the answer' },
  service_tier: { role: 'ignored', why: "latency/price class; the saved cost reported is the original call's" },
  cache_control: { role: 'ignored', why: "Anthropic prompt caching: changes the upstream's cost, not the answer" },
  prompt_cache_key: { role: 'ignored', why: 'routing hint for the upstream prompt cache; does not change the answer' },
};

/** Names of the fields that are part of the key, in one list (tests iterate it). */
export const CACHE_KEY_FIELD_NAMES = (Object.keys(CACHE_KEY_FIELDS) as Array<keyof ChatRequest>).filter((name) => CACHE_KEY_FIELDS[name].role === 'key');

function hasTools(request: ChatRequest): boolean {
  return request.tools !== undefined && request.tools.length > 0;
}

function nonEmpty<T>(list: T[] | undefined): T[] | undefined {
  return list === undefined || list.length === 0 ? undefined : list;
}

/**
 * JSON Schemas and other client JSON keep the client's key order: structured outputs generate
 * fields in schema order, so two schemas that differ only in order can give different answers.
 */
function opaqueJson(value: unknown): OpaqueJson | undefined {
  return value === undefined ? undefined : { opaque: JSON.stringify(value) };
}

function canonicalTool(tool: ChatTool): unknown {
  if (tool.type === 'custom') return { type: tool.type, name: tool.custom.name, description: tool.custom.description, format: opaqueJson(tool.custom.format) };
  const fn = tool.function;
  return {
    type: tool.type,
    name: fn.name,
    description: fn.description,
    parameters: opaqueJson(fn.parameters),
    strict: fn.strict === true ? true : undefined, // absent ≡ false
  };
}

function canonicalResponseFormat(format: ResponseFormat | undefined): unknown {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: format.type };
  const spec = format.json_schema;
  return {
    type: format.type,
    name: spec.name,
    description: spec.description,
    schema: opaqueJson(spec.schema),
    strict: spec.strict === true ? true : undefined, // absent ≡ false
  };
}

function canonicalMessage(message: ChatMessage): unknown {
  switch (message.role) {
    case 'system':
    case 'developer':
      // system and developer stay distinct: OpenAI's reasoning models treat them differently.
      return { role: message.role, name: message.name, content: canonicalText(message.content) };
    case 'user':
      return { role: message.role, name: message.name, content: canonicalUserContent(message.content) };
    case 'assistant':
      return {
        role: message.role,
        name: message.name,
        content: canonicalAssistantContent(message.content),
        // Tool-call ids stay: the follow-up tool messages refer to them.
        tool_calls: nonEmpty(message.tool_calls)?.map((call) =>
          call.type === 'function'
            ? { id: call.id, type: call.type, name: call.function.name, arguments: call.function.arguments }
            : { id: call.id, type: call.type, name: call.custom.name, input: call.custom.input },
        ),
        refusal: message.refusal ?? undefined, // null ≡ absent
        reasoning_content: message.reasoning_content,
      };
    case 'tool':
      return { role: message.role, tool_call_id: message.tool_call_id, content: canonicalText(message.content) };
  }
}

/** A lone text part ≡ the same text as a string (every provider sends both as one text block). */
function singleText(parts: ReadonlyArray<{ type: string }>): string | undefined {
  const only = parts.length === 1 ? parts[0] : undefined;
  return only !== undefined && only.type === 'text' ? (only as TextPart).text : undefined;
}

function canonicalAssistantContent(content: AssistantMessage['content']): unknown {
  if (content === null || typeof content === 'string') return content;
  return singleText(content) ?? content.map((part) => (part.type === 'text' ? { type: 'text', text: part.text } : { type: 'refusal', refusal: part.refusal }));
}

function canonicalText(content: string | TextPart[]): unknown {
  if (typeof content === 'string') return content;
  return singleText(content) ?? content.map((part) => ({ type: 'text', text: part.text }));
}

function canonicalUserContent(content: string | UserContentPart[]): unknown {
  if (typeof content === 'string') return content;
  return (
    singleText(content) ??
    content.map((part) =>
      part.type === 'text'
        ? { type: 'text', text: part.text }
        : // detail absent ≡ 'auto' (OpenAI's default; the others ignore detail).
          { type: 'image_url', url: part.image_url.url, detail: part.image_url.detail ?? 'auto' },
    )
  );
}
