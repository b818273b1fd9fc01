// Provider for any OpenAI-compatible upstream (HolySheep and other relays, OpenAI, DeepSeek): the
// request passes through with the model replaced; responses and chunks come back nearly untouched.
import type { AbortLink } from '../../../core/abort-link.ts';
import type { ChatChunk, ChatResponse, FinishReason, Usage } from '../../chat-types.ts';
import { isJsonObject } from '../../check-json-value.ts';
import { convertUsageToOpenAI } from '../../convert-usage-to-openai.ts';
import { collectChatDataText } from '../../dialects/openai-chat/parse-chat-sse-chunks.ts';
import { collectResponseText, CompletionTextCollector, countTokens, estimateUsage } from '../../usage-estimate.ts';
import { attachUpstreamBytes } from '../../upstream-bytes.ts';
import { HttpUpstream, type SseRead } from '../http-upstream.ts';
import { SseEventSplitter } from '../split-sse-events.ts';
import { OpenAIChatPassThrough } from './pass-openai-chat-events.ts';
import type { EmbedRequest, EmbedResult, Provider, ProviderRequest, ProviderResult, ProviderStreamEvent } from '../provider.ts';
import { DEFAULT_TIMEOUT_MS, type ProviderOptions } from '../provider-options.ts';
import { UpstreamError } from '../upstream-error.ts';
import { convertOpenAIEmbeddingsRequest, convertOpenAIEmbeddingsResponse } from './convert-openai-embeddings.ts';
import { convertOpenAIRequest } from './convert-openai-request.ts';
import { convertOpenAIUsage } from './convert-openai-usage.ts';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.ts';
import { parseOpenAIErrorBody } from './parse-openai-error.ts';

const PATH = '/chat/completions';
const EMBEDDINGS_PATH = '/embeddings';

export function createOpenAIProvider(options: ProviderOptions): Provider {
  return new OpenAIProvider(options);
}

class OpenAIProvider implements Provider {
  readonly name: string;
  private readonly upstream: HttpUpstream;

  constructor(options: ProviderOptions) {
    this.name = options.name;
    this.upstream = new HttpUpstream({
      provider: options.name,
      baseUrl: options.baseUrl,
      headers: { ...options.headers, authorization: `Bearer ${options.apiKey}` },
      secrets: [options.apiKey],
      parseErrorBody: parseOpenAIErrorBody,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      connections: options.connections,
    });
  }

  async chat(req: ProviderRequest, signal: AbortLink): Promise<ProviderResult> {
    const { body, text } = await this.upstream.postJsonText({
      path: PATH,
      body: convertOpenAIRequest(req.request, req.upstreamModel, false),
      signal,
      timeoutMs: req.timeoutMs,
    });
    const response = this.checkResponse(body);
    // Same dialect as an OpenAI chat client: the bytes go on as sent, usage details Herd does not model included.
    attachUpstreamBytes(response, text);
    const rawReason = rawFinishReason(body);
    for (const choice of response.choices) choice.finish_reason = mapOpenAIFinishReason(choice.finish_reason);
    const usage = convertOpenAIUsage(response.usage) ?? (await estimateUsage(req.request, collectResponseText(response)));
    response.usage = convertUsageToOpenAI(usage);
    return { response, usage, rawFinishReason: rawReason, warnings: [] };
  }

  stream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    return req.passThrough?.dialect === 'openai-chat' ? this.passStream(req, signal) : this.translateStream(req, signal);
  }

  /** An OpenAI chat client: the upstream's events go on as its bytes, read for usage as they pass. */
  private async *passStream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const reading: SseRead = { sawEvent: false, sawFinal: false };
    const texts = this.upstream.postSseText(
      { path: PATH, body: convertOpenAIRequest(req.request, req.upstreamModel, true), signal, timeoutMs: req.timeoutMs, idleTimeoutMs: req.idleTimeoutMs },
      reading,
    );
    const splitter = new SseEventSplitter();
    const pass = new OpenAIChatPassThrough(req.request.stream_options?.include_usage === true, convertOpenAIUsage);
    for await (const text of texts) {
      let out = '';
      const before = pass.chunks;
      for (const block of splitter.feed(text)) {
        if (block.data !== undefined) reading.sawEvent = true;
        const decision = pass.read(block);
        switch (decision.kind) {
          case 'forward':
            out += block.text;
            break;
          case 'replace':
            out += decision.text;
            break;
          case 'drop':
            break;
          case 'done':
            reading.sawFinal = true;
            break;
          case 'error':
            throw this.errorInBody(decision.body);
          case 'malformed':
            throw this.upstream.malformed(decision.detail);
        }
        if (reading.sawFinal) break;
      }
      if (out !== '') {
        yield { type: 'raw', text: out, dialect: 'openai-chat', chunks: pass.chunks - before, model: pass.model };
      }
      if (reading.sawFinal) break;
    }
    if (!reading.sawFinal && pass.finishReason === null) {
      throw new UpstreamError(`${this.name}: stream ended before [DONE]`, { provider: this.name, failure: 'interrupted' });
    }
    const usage = pass.usage ?? (await estimateUsage(req.request, collectChatDataText(pass.data)));
    yield { type: 'usage', usage, delivered: pass.usage !== undefined };
    yield { type: 'done', finishReason: pass.finishReason, rawFinishReason: pass.rawFinishReason };
  }

  private async *translateStream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const events = this.upstream.postSse({
      path: PATH,
      body: convertOpenAIRequest(req.request, req.upstreamModel, true),
      signal,
      timeoutMs: req.timeoutMs,
      idleTimeoutMs: req.idleTimeoutMs,
      isFinal: (message) => message.data === '[DONE]',
    });
    const collector = new CompletionTextCollector();
    let usage: Usage | undefined;
    let usageText: string | undefined;
    let finishReason: FinishReason | null = null;
    let rawReason: string | null = null;
    let sawDone = false;
    for await (const event of events) {
      if (event.data === '[DONE]') {
        sawDone = true;
        break;
      }
      const chunk = this.checkChunk(this.upstream.parseJson(event.data, 'SSE event'));
      // With include_usage the last chunk has empty choices and the usage; other chunks carry usage: null.
      if (chunk.usage != null) usage = convertOpenAIUsage(chunk.usage) ?? usage;
      if (chunk.choices.length === 0) {
        if (chunk.usage != null) usageText = event.data;
        continue;
      }
      // Cleared, not deleted: OpenAI sends `obfuscation` after `usage`, and deleting a property that is not the
      // last one turns each chunk into a slow dictionary object (docs/decisions/hot-path-allocation-shapes.md).
      // A chunk carrying both choices and usage (some servers) is re-serialised: the usage goes out only under include_usage.
      if (chunk.usage == null) attachUpstreamBytes(chunk, event.data);
      chunk.usage = undefined;
      for (const choice of chunk.choices) {
        if (choice.finish_reason == null) continue;
        const raw: unknown = choice.finish_reason;
        choice.finish_reason = mapOpenAIFinishReason(raw);
        if (choice.index === 0 || finishReason === null) {
          finishReason = choice.finish_reason;
          rawReason = String(raw);
        }
      }
      collector.addChunk(chunk);
      yield { type: 'chunk', chunk };
    }
    // Some OpenAI-compatible servers omit [DONE]; a stream that reached a finish_reason is complete.
    if (!sawDone && finishReason === null) {
      throw new UpstreamError(`${this.name}: stream ended before [DONE]`, { provider: this.name, failure: 'interrupted' });
    }
    const usageEvent: ProviderStreamEvent = { type: 'usage', usage: usage ?? (await estimateUsage(req.request, collector.text())) };
    if (usageText !== undefined && usage !== undefined) usageEvent.bytes = usageText;
    yield usageEvent;
    yield { type: 'done', finishReason, rawFinishReason: rawReason };
  }

  async embed(req: EmbedRequest, signal: AbortLink): Promise<EmbedResult> {
    const body = await this.upstream.postJson({ path: EMBEDDINGS_PATH, body: convertOpenAIEmbeddingsRequest(req), signal, timeoutMs: req.timeoutMs });
    if (isJsonObject(body) && body.error != null) throw this.errorInBody(body);
    const answer = convertOpenAIEmbeddingsResponse(body, req.inputs.length);
    if (typeof answer === 'string') throw this.upstream.malformed(answer);
    if (answer.promptTokens !== undefined) return { vectors: answer.vectors, usage: { promptTokens: answer.promptTokens } };
    let promptTokens = 0;
    for (const text of req.inputs) promptTokens += await countTokens(text);
    return { vectors: answer.vectors, usage: { promptTokens, estimated: true } };
  }

  close(): Promise<void> {
    return this.upstream.close();
  }

  /** A 200 can still carry an error object (relays do this); anything without choices is malformed. */
  private checkResponse(body: unknown): ChatResponse {
    if (isJsonObject(body) && body.error != null) throw this.errorInBody(body);
    if (!isJsonObject(body) || !Array.isArray(body.choices) || !body.choices.every((c) => isJsonObject(c) && isJsonObject(c.message))) {
      throw this.upstream.malformed('response is not a chat.completion (no choices[].message)');
    }
    return body as unknown as ChatResponse;
  }

  private checkChunk(data: unknown): ChatChunk {
    if (isJsonObject(data) && data.error != null) throw this.errorInBody(data);
    if (!isJsonObject(data)) throw this.upstream.malformed('SSE event is not a JSON object');
    // Usage-only chunks from some servers have choices: null or no choices at all.
    if (data.choices == null) data.choices = [];
    if (!Array.isArray(data.choices) || !data.choices.every((c) => isJsonObject(c) && isJsonObject(c.delta ?? {}))) {
      throw this.upstream.malformed('SSE event is not a chat.completion.chunk');
    }
    for (const choice of data.choices as Array<Record<string, unknown>>) choice.delta ??= {};
    return data as unknown as ChatChunk;
  }

  private errorInBody(body: Record<string, unknown>): UpstreamError {
    const details = parseOpenAIErrorBody(body);
    const type = details.type ? ` ${this.upstream.safe(details.type)}` : '';
    return new UpstreamError(`${this.name}: upstream error${type}: ${this.upstream.safe(details.message ?? 'no message')}`, {
      provider: this.name,
      failure: details.failure ?? 'server_error',
      upstreamType: details.type,
    });
  }
}

function rawFinishReason(body: unknown): string | null {
  if (!isJsonObject(body) || !Array.isArray(body.choices)) return null;
  const first: unknown = body.choices[0];
  return isJsonObject(first) && typeof first.finish_reason === 'string' ? first.finish_reason : null;
}
