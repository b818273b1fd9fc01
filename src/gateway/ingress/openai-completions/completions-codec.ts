// The legacy completions dialect (POST /v1/completions) as an ingress codec, bridged onto chat: the
// prompt becomes one user message, the answer's text the choice's `text`, in `text_completion` objects.
import type { ChatChunk, ChatRequest, ChatResponse, FinishReason, UnmodeledField, Usage } from '../../protocol/chat-types.ts';
import { expectArray, invalidParam, isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { convertUsageToOpenAI } from '../../wire/openai-chat/convert-usage-to-openai.ts';
import { validateChatRequest } from '../openai-chat/validate-chat-request.ts';
import { COMPLETIONS_FIELDS } from './completions-field-table.ts';
import { createUnmodeled, UNKNOWN_MEMBER } from '../../protocol/dialect-field-table.ts';
import type { EncodeContext, IngressCodec, IngressStreamEncoder, SseEvent, StreamFailure } from '../../protocol/ingress-codec.ts';

export interface CompletionsDecoded {
  includeUsage: boolean;
}

type CompletionFinish = 'stop' | 'length' | 'content_filter';

export interface TextCompletionChoice {
  text: string;
  index: number;
  logprobs: null;
  finish_reason: CompletionFinish | null;
}

export interface TextCompletion {
  id: string;
  object: 'text_completion';
  created: number;
  model: string;
  choices: TextCompletionChoice[];
  usage?: ReturnType<typeof convertUsageToOpenAI>;
  system_fingerprint?: string;
}

/** Members with chat's names and checks: the chat validator reads them (and records what is nested unknown in them). */
const CHAT_KEYS = new Set([
  'model',
  'max_tokens',
  'temperature',
  'top_p',
  'n',
  'stream',
  'stream_options',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'seed',
  'user',
]);

export function decodeCompletionsRequest(body: unknown): { request: ChatRequest; decoded: CompletionsDecoded } {
  if (!isJsonObject(body)) throw invalidParam('body', 'expected a JSON object');
  const unmodeled: UnmodeledField[] = [];
  // Chat-only parameters (messages, tools, response_format) are unknown here, as on OpenAI's legacy endpoint.
  const chat: JsonObject = {};
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (CHAT_KEYS.has(key)) chat[key] = value;
    else if (key !== 'prompt' && value !== null && value !== undefined) {
      const fate = legacyFate(key, value);
      if (fate !== undefined) unmodeled.push(createUnmodeled(COMPLETIONS_FIELDS, fate, key, value));
    }
  }
  chat.messages = [{ role: 'user', content: decodePrompt(body.prompt, unmodeled) }];
  const request = validateChatRequest(chat);
  if (unmodeled.length > 0) request.unmodeled = [...unmodeled, ...(request.unmodeled ?? [])];
  const includeUsage = request.stream_options?.include_usage === true;
  // The usage chunk is this dialect's to write (from the stream's settled usage), not the relay's.
  delete request.stream_options;
  return { request, decoded: { includeUsage } };
}

/** The table entry of a member the chat validator does not read; undefined for a legacy default that asks for nothing. */
function legacyFate(key: string, value: unknown): string | undefined {
  if (key === 'echo') return value === false ? undefined : 'echo: true';
  if (key === 'best_of') return value === 1 ? undefined : 'best_of > 1';
  return Object.hasOwn(COMPLETIONS_FIELDS, key) ? key : UNKNOWN_MEMBER;
}

/** One text prompt; several prompts or token ids are recorded (refused when bridged) and read as text where they are text. */
function decodePrompt(value: unknown, unmodeled: UnmodeledField[]): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) throw invalidParam('prompt', 'expected a string or an array of one string');
  const list = expectArray(value, 'prompt');
  if (list.length === 1 && typeof list[0] === 'string') return list[0];
  unmodeled.push(createUnmodeled(COMPLETIONS_FIELDS, 'prompt: several or token ids', 'prompt', value));
  return list.filter((item): item is string => typeof item === 'string').join('\n');
}

function mapFinish(reason: FinishReason | null): CompletionFinish | null {
  if (reason === null) return null;
  return reason === 'length' || reason === 'content_filter' ? reason : 'stop';
}

/** chat.completion ids are `chatcmpl-…`; legacy ones `cmpl-…`. */
const completionId = (chatId: string) => (chatId.startsWith('chatcmpl-') ? `cmpl-${chatId.slice('chatcmpl-'.length)}` : chatId);

export function encodeCompletionsResponse(response: ChatResponse, usage: Usage): TextCompletion {
  const out: TextCompletion = {
    id: completionId(response.id),
    object: 'text_completion',
    created: response.created,
    model: response.model,
    choices: response.choices.map((c) => ({ text: c.message.content ?? '', index: c.index, logprobs: null, finish_reason: mapFinish(c.finish_reason) ?? 'stop' })),
    usage: convertUsageToOpenAI(usage),
  };
  if (response.system_fingerprint) out.system_fingerprint = response.system_fingerprint;
  return out;
}

class CompletionsStreamEncoder implements IngressStreamEncoder {
  private id: string | undefined;
  private created = Math.floor(Date.now() / 1000);

  constructor(
    private readonly decoded: CompletionsDecoded,
    private readonly model: string,
  ) {}

  start(): SseEvent[] {
    return [];
  }

  chunk(chunk: ChatChunk): SseEvent[] {
    this.id ??= completionId(chunk.id);
    this.created = chunk.created;
    const choices: TextCompletionChoice[] = [];
    for (const c of chunk.choices) {
      const text = c.delta.content ?? '';
      if (text === '' && c.finish_reason === null) continue;
      choices.push({ text, index: c.index, logprobs: null, finish_reason: mapFinish(c.finish_reason) });
    }
    if (choices.length === 0) return [];
    return [{ data: this.object(choices) }];
  }

  end(usage: Usage): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.decoded.includeUsage) events.push({ data: { ...this.object([]), usage: convertUsageToOpenAI(usage) } });
    events.push({ data: '[DONE]' });
    return events;
  }

  /** As on chat completions: an error object and no [DONE]. */
  fail(error: StreamFailure): SseEvent[] {
    return [{ data: { error } }];
  }

  private object(choices: TextCompletionChoice[]): TextCompletion {
    return { id: this.id ?? 'cmpl-herd', object: 'text_completion', created: this.created, model: this.model, choices };
  }
}

export const completionsCodec: IngressCodec<CompletionsDecoded> = {
  dialect: 'openai-completions',
  decode: decodeCompletionsRequest,
  passThrough: true,
  encodeResponse: (response, usage) => encodeCompletionsResponse(response, usage),
  createStreamEncoder: (decoded: CompletionsDecoded, context: EncodeContext) => new CompletionsStreamEncoder(decoded, context.model),
  // Passed through from an upstream's /completions: Herd writes the [DONE] (held until the ledger has
  // the rows, as on chat), and an error object without [DONE] when the stream broke.
  raw: {
    // The upstream's [DONE] is not forwarded: Herd's own is the end.
    end: () => 'data: [DONE]\n\n',
    fail: (error: StreamFailure) => `data: ${JSON.stringify({ error })}\n\n`,
  },
};
