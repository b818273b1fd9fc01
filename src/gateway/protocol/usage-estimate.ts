// Token counts for when an upstream reports no usage: Herd counts with o200k_base (current OpenAI
// models' encoding) and marks the result `estimated`; for other vendors it is an approximation.
import type { ChatChunk, ChatMessage, ChatRequest, ChatResponse, ToolCall, Usage } from './chat-types.ts';

type CountTokens = (text: string) => number;

// Loaded on first use: the encoding is slow to load and large, and most processes never need it
// (every supported upstream reports usage unless something is wrong; docs/decisions/lazy-tokenizer.md).
let tokenizer: Promise<CountTokens> | undefined;

function loadTokenizer(): Promise<CountTokens> {
  tokenizer ??= import('gpt-tokenizer/encoding/o200k_base').then((module) => (text: string) => countInSlices(text, module.countTokens));
  return tokenizer;
}

/**
 * The BPE's time grows with the square of a run without spaces, and that text comes from clients and
 * upstreams: count long texts slice by slice (docs/decisions/token-count-slices.md), cut at a space near each
 * slice's end where there is one (never inside a surrogate pair).
 */
const SLICE_CHARS = 2048;
const SPACE_SEARCH = 256;

function countInSlices(text: string, count: CountTokens): number {
  if (text.length <= SLICE_CHARS) return count(text);
  let total = 0;
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + SLICE_CHARS, text.length);
    if (end < text.length) {
      const space = text.lastIndexOf(' ', end);
      if (space > end - SPACE_SEARCH && space > start) end = space;
      else if (isHighSurrogate(text.charCodeAt(end - 1))) end--;
    }
    total += count(text.slice(start, end));
    start = end;
  }
  return total;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

export async function countTokens(text: string): Promise<number> {
  if (text === '') return 0;
  return (await loadTokenizer())(text);
}

// OpenAI's published accounting for chat formatting: each message costs 3 tokens of framing,
// a name 1 more, and every reply is primed with 3 tokens.
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMING_TOKENS = 3;

/** Estimated prompt tokens of a request: message text, tool calls and tool definitions. */
export async function estimatePromptTokens(request: ChatRequest): Promise<number> {
  const count = await loadTokenizer();
  let total = REPLY_PRIMING_TOKENS;
  for (const message of request.messages) {
    total += TOKENS_PER_MESSAGE + count(messageText(message));
    if ('name' in message && message.name !== undefined) total += TOKENS_PER_NAME + count(message.name);
  }
  if (request.tools !== undefined && request.tools.length > 0) total += count(JSON.stringify(request.tools));
  return total;
}

function messageText(message: ChatMessage): string {
  const parts: string[] = [];
  const content = message.content;
  if (typeof content === 'string') parts.push(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text') parts.push(part.text);
      else if (part.type === 'refusal') parts.push(part.refusal);
      // Images are priced by the upstream by size and detail; text tokenizers cannot count them.
    }
  }
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) parts.push(...toolCallText(call));
  }
  return parts.join('\n');
}

/** What a stream produced, for counting: the text kept (at most SAMPLE_CHARS) and how long all of it was. */
export interface CompletionSample {
  text: string;
  totalChars: number;
}

/**
 * Text a stream keeps for a usage estimate: a stream's answer can be any size, so memory and counting time
 * stay bounded and tokens beyond the sample are extrapolated at the sample's tokens per character.
 */
export const SAMPLE_CHARS = 256 * 1024;

/** Usage counted by Herd for a request and the text the model produced (whole, or a sample of it). */
export async function estimateUsage(request: ChatRequest, completion: string | CompletionSample): Promise<Usage> {
  const sample = typeof completion === 'string' ? { text: completion, totalChars: completion.length } : completion;
  const [promptTokens, sampleTokens] = await Promise.all([estimatePromptTokens(request), countTokens(sample.text)]);
  const completionTokens = sample.totalChars > sample.text.length && sample.text.length > 0 ? Math.round((sampleTokens * sample.totalChars) / sample.text.length) : sampleTokens;
  return {
    promptTokens,
    cachedPromptTokens: 0,
    cacheWriteTokens: 0,
    completionTokens,
    reasoningTokens: 0,
    estimated: true,
    raw: undefined,
  };
}

/**
 * Collects the generated text of a stream (content, reasoning, tool names and arguments), so usage
 * can be estimated if the upstream never reports it. Pushing strings is cheap; joining happens once.
 */
export class CompletionTextCollector {
  private readonly pieces: string[] = [];
  private kept = 0;
  private total = 0;

  addChunk(chunk: ChatChunk): void {
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (delta.content) this.add(delta.content);
      if (delta.reasoning_content) this.add(delta.reasoning_content);
      if (delta.refusal) this.add(delta.refusal);
      for (const call of delta.tool_calls ?? []) {
        if (call.function?.name) this.add(call.function.name);
        if (call.function?.arguments) this.add(call.function.arguments);
        if (call.custom?.name) this.add(call.custom.name);
        if (call.custom?.input) this.add(call.custom.input);
      }
    }
  }

  /** Counted always; kept only up to SAMPLE_CHARS. */
  add(text: string): void {
    this.total += text.length;
    if (this.kept >= SAMPLE_CHARS) return;
    const piece = text.length <= SAMPLE_CHARS - this.kept ? text : text.slice(0, SAMPLE_CHARS - this.kept);
    this.pieces.push(piece);
    this.kept += piece.length;
  }

  text(): string {
    return this.pieces.join('');
  }

  sample(): CompletionSample {
    return { text: this.text(), totalChars: this.total };
  }
}

/** The generated text of chunks already in hand (raw pass-through pieces read back), for estimateUsage. */
export function collectChunksText(chunks: Iterable<ChatChunk>): string {
  const collector = new CompletionTextCollector();
  for (const chunk of chunks) collector.addChunk(chunk);
  return collector.text();
}

/** The generated text of a finished response, for estimateUsage. */
export function collectResponseText(response: ChatResponse): string {
  const pieces: string[] = [];
  for (const { message } of response.choices) {
    if (message.content) pieces.push(message.content);
    if (message.reasoning_content) pieces.push(message.reasoning_content);
    for (const call of message.tool_calls ?? []) pieces.push(...toolCallText(call));
  }
  return pieces.join('');
}

/** What a tool call says, for counting: its name and its arguments (function) or free-text input (custom). */
export function toolCallText(call: ToolCall): [string, string] {
  return call.type === 'function' ? [call.function.name, call.function.arguments] : [call.custom.name, call.custom.input];
}
