// The legacy completions dialect (POST /v1/completions) as an ingress codec, bridged onto chat: the
// prompt becomes one user message, the answer's text the choice's `text`, in `text_completion` objects.
import { HerdError } from '../../../core/errors.ts';
import type { ChatChunk, ChatRequest, ChatResponse, FinishReason, Usage } from '../../chat-types.ts';
import { expectArray, expectString, invalidParam, isJsonObject, rejectUnknownKeys } from '../../check-json-value.ts';
import { convertUsageToOpenAI } from '../../convert-usage-to-openai.ts';
import { validateChatRequest } from '../../validate-chat-request.ts';
import type { EncodeContext, IngressCodec, IngressStreamEncoder, SseEvent, StreamFailure } from '../ingress-codec.ts';

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

/** Legacy parameters with no chat counterpart: refused rather than silently ignored. */
const REFUSED: Readonly<Record<string, string>> = {
  echo: "Herd bridges /v1/completions onto chat, which cannot echo the prompt: leave 'echo' unset or false.",
  best_of: "Herd bridges /v1/completions onto chat, which has no 'best_of': leave it unset or 1.",
  suffix: "Herd bridges /v1/completions onto chat, which cannot insert text before a suffix: leave 'suffix' unset.",
  logprobs: "Herd's /v1/completions bridge does not return logprobs: leave 'logprobs' unset.",
};
const DEFAULTS: Readonly<Record<string, unknown>> = { echo: false, best_of: 1 };
const KNOWN_KEYS = new Set([
  'model',
  'prompt',
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
  ...Object.keys(REFUSED),
]);

export function decodeCompletionsRequest(body: unknown): { request: ChatRequest; decoded: CompletionsDecoded } {
  if (!isJsonObject(body)) throw invalidParam('body', 'expected a JSON object');
  // Chat-only parameters (messages, tools, response_format) are unknown here, as on OpenAI's legacy endpoint.
  rejectUnknownKeys(body, KNOWN_KEYS, '');
  const { prompt, ...rest } = body;
  for (const [key, reason] of Object.entries(REFUSED)) {
    const value = rest[key];
    if (value !== undefined && value !== null && value !== DEFAULTS[key]) throw new HerdError('UNSUPPORTED', reason, { param: key });
    delete rest[key];
  }
  // The other parameters are chat's own, by the same names: chat's validator checks them.
  const request = validateChatRequest({ ...rest, messages: [{ role: 'user', content: decodePrompt(prompt) }] });
  const includeUsage = request.stream_options?.include_usage === true;
  // The usage chunk is this dialect's to write (from the stream's settled usage), not the relay's.
  delete request.stream_options;
  return { request, decoded: { includeUsage } };
}

function decodePrompt(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) throw invalidParam('prompt', 'expected a string or an array of one string');
  const list = expectArray(value, 'prompt');
  if (list.length !== 1 || typeof list[0] !== 'string') {
    const tokens = list.length > 0 && list.every((item) => typeof item === 'number' || Array.isArray(item));
    throw new HerdError(
      'UNSUPPORTED',
      tokens
        ? "Herd bridges /v1/completions onto chat, which takes text: send 'prompt' as a string, not token ids."
        : "Herd bridges /v1/completions onto chat with one prompt per request: send 'prompt' as a string or an array of exactly one string.",
      { param: 'prompt' },
    );
  }
  return expectString(list[0], 'prompt[0]');
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
