// Provider for Anthropic's Messages API (POST /v1/messages, x-api-key, anthropic-version 2023-06-01).
// An Anthropic client's body goes up as sent and the answer's bytes come back as sent (pass-through);
// any other client's request is translated from and to the canonical shape.
import type { AbortLink } from '../../../core/abort-link.ts';
import { collectChunksText, collectResponseText, CompletionTextCollector, estimateUsage } from '../../protocol/usage-estimate.ts';
import { convertUsageToOpenAI } from '../../wire/openai-chat/convert-usage-to-openai.ts';
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { attachUpstreamBytes } from '../../protocol/upstream-bytes.ts';
import { parseMessagesSseChunks } from '../../wire/anthropic-messages/parse-messages-sse-chunks.ts';
import { parseUpstreamModelList } from '../parse-upstream-model-list.ts';
import { HttpUpstream, type SseRead } from '../http-upstream.ts';
import { bridgeUnmodeled } from '../bridge-unmodeled.ts';
import type { AnthropicRequest } from '../../wire/anthropic-messages/anthropic-types.ts';
import type { ProviderRequest, ProviderResult, ProviderStreamEvent, ProviderWarning } from '../provider.ts';
import { SseEventSplitter } from '../../wire/split-sse-events.ts';
import { DEFAULT_TIMEOUT_MS, type ProviderOptions } from '../provider-options.ts';
import { UpstreamError } from '../../protocol/upstream-error.ts';
import { AnthropicStreamTranslator } from '../../wire/anthropic-messages/anthropic-stream-translator.ts';
import { convertAnthropicClientHeaders, convertAnthropicRequest } from './convert-anthropic-request.ts';
import { DEFAULT_ANTHROPIC_MAX_TOKENS } from '../../wire/anthropic-messages/anthropic-types.ts';
import { convertAnthropicResponse, isAnthropicResponse } from '../../wire/anthropic-messages/convert-anthropic-response.ts';
import { convertAnthropicUsage, countAnthropicReasoning } from '../../wire/anthropic-messages/convert-anthropic-usage.ts';
import { convertAnthropicStreamError, mapAnthropicErrorType, parseAnthropicErrorBody } from '../../wire/anthropic-messages/map-anthropic-error.ts';
import { AnthropicMessagesPassThrough } from '../../wire/anthropic-messages/pass-anthropic-events.ts';
import type { BatchCapableProvider, UpstreamBatchClient } from '../upstream-batch-client.ts';
import { ANTHROPIC_VERSION } from './anthropic-api-version.ts';
import { createAnthropicBatchClient } from './anthropic-batch-client.ts';

export { ANTHROPIC_VERSION };
const PATH = '/v1/messages';
// One page: Anthropic's largest; a longer list is cut, which only shortens GET /v1/models.
const MODELS_PATH = '/v1/models?limit=1000';

export interface AnthropicProviderOptions extends ProviderOptions {
  /** max_tokens sent when the client set neither max_tokens nor max_completion_tokens. */
  defaultMaxTokens?: number;
}

export function createAnthropicProvider(options: AnthropicProviderOptions): BatchCapableProvider {
  return new AnthropicProvider(options);
}

class AnthropicProvider implements BatchCapableProvider {
  readonly name: string;
  /** Message Batches on the same account; whether Herd uses them is the configuration's choice. */
  readonly batches: UpstreamBatchClient;
  private readonly upstream: HttpUpstream;
  private readonly defaultMaxTokens: number;

  constructor(options: AnthropicProviderOptions) {
    this.name = options.name;
    this.batches = createAnthropicBatchClient(options);
    this.defaultMaxTokens = options.defaultMaxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS;
    this.upstream = new HttpUpstream({
      provider: options.name,
      baseUrl: options.baseUrl,
      headers: { ...options.headers, 'x-api-key': options.apiKey, 'anthropic-version': ANTHROPIC_VERSION },
      secrets: [options.apiKey],
      parseErrorBody: parseAnthropicErrorBody,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      connections: options.connections,
    });
  }

  async chat(req: ProviderRequest, signal: AbortLink): Promise<ProviderResult> {
    const client = clientBody(req);
    const { body, warnings } = client === undefined ? this.translateRequest(req, false) : { body: convertPassThroughBody(client, req.upstreamModel, false), warnings: [] };
    const answer = await this.upstream.postJsonText({
      path: PATH,
      body,
      signal,
      timeoutMs: req.timeoutMs,
      traceParent: req.traceParent,
      headers: convertAnthropicClientHeaders(req.request),
    });
    const raw = answer.body;
    if (!isAnthropicResponse(raw)) {
      if (isJsonObject(raw) && raw.type === 'error') throw this.bodyError(raw);
      throw this.upstream.malformed('response is not a Messages API message');
    }
    // The canonical answer is still built: the ledger, the cache and clients of other dialects read it.
    const response = convertAnthropicResponse(raw);
    if (client !== undefined) attachUpstreamBytes(response, answer.text, 'anthropic-messages');
    let usage = convertAnthropicUsage(raw.usage);
    if (typeof raw.usage.input_tokens !== 'number' || typeof raw.usage.output_tokens !== 'number') {
      usage = await estimateUsage(req.request, collectResponseText(response));
    }
    const thinking = response.choices[0]?.message.reasoning_content;
    if (thinking !== undefined) await countAnthropicReasoning(usage, thinking);
    if (usage.estimated || thinking !== undefined) response.usage = convertUsageToOpenAI(usage);
    return { response, usage, rawFinishReason: raw.stop_reason, warnings };
  }

  /** A client of another dialect: the canonical request converted, plus what the bridge drops. */
  private translateRequest(req: ProviderRequest, stream: boolean): { body: AnthropicRequest; warnings: ProviderWarning[] } {
    const dropped = bridgeUnmodeled(req, this.name);
    const converted = convertAnthropicRequest(req.request, req.upstreamModel, { defaultMaxTokens: this.defaultMaxTokens, stream });
    if (dropped.length > 0) converted.warnings.push(...dropped);
    return converted;
  }

  stream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const client = clientBody(req);
    return client === undefined ? this.translateStream(req, signal) : this.passStream(req, client, signal);
  }

  /**
   * An Anthropic client: the upstream's events go on as its bytes, cut into whole events and read for
   * usage as they pass. message_stop leaves in a piece of its own, so the transport can hold the stream's
   * end until the ledger has the request's rows (as OpenAI chat's [DONE] is Herd's own).
   */
  private async *passStream(req: ProviderRequest, client: Readonly<JsonObject>, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const reading: SseRead = { sawEvent: false, sawFinal: false };
    const texts = this.upstream.postSseText(
      {
        path: PATH,
        body: convertPassThroughBody(client, req.upstreamModel, true),
        signal,
        timeoutMs: req.timeoutMs,
        traceParent: req.traceParent,
        headers: convertAnthropicClientHeaders(req.request),
        idleTimeoutMs: req.idleTimeoutMs,
      },
      reading,
    );
    const splitter = new SseEventSplitter();
    const pass = new AnthropicMessagesPassThrough();
    // Kept for an estimate should the upstream send no usage (the pieces are not copied).
    const forwarded: string[] = [];
    for await (const text of texts) {
      let out = '';
      let stop = '';
      const before = pass.chunks;
      for (const block of splitter.feed(text)) {
        if (block.data !== undefined) reading.sawEvent = true;
        const decision = pass.read(block);
        if (decision.kind === 'forward') out += block.text;
        else if (decision.kind === 'stop') {
          reading.sawFinal = true;
          stop = block.text;
          break;
        } else if (decision.kind === 'error') throw convertAnthropicStreamError(this.name, decision.body, (t) => this.upstream.safe(t));
        else throw this.upstream.malformed(decision.detail);
      }
      if (out !== '') {
        forwarded.push(out);
        yield { type: 'raw', text: out, dialect: 'anthropic-messages', chunks: pass.chunks - before, model: pass.model };
      }
      if (stop !== '') {
        yield { type: 'raw', text: stop, dialect: 'anthropic-messages', chunks: 0, model: pass.model };
        break;
      }
    }
    if (!pass.stopped) {
      throw new UpstreamError(`${this.name}: stream ended before message_stop`, { provider: this.name, failure: 'interrupted' });
    }
    // The usage is in the events the client already has; without any, Herd's estimate of what was forwarded.
    const usage = pass.usage ?? (await estimateUsage(req.request, collectChunksText(parseMessagesSseChunks(forwarded))));
    yield { type: 'usage', usage: await countAnthropicReasoning(usage, pass.thinking), delivered: true };
    yield { type: 'done', finishReason: pass.finishReason, rawFinishReason: pass.rawStopReason };
  }

  private async *translateStream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const { body, warnings } = this.translateRequest(req, true);
    if (warnings.length > 0) yield { type: 'warnings', warnings };
    const translator = new AnthropicStreamTranslator(this.name, (text) => this.upstream.safe(text));
    const collector = new CompletionTextCollector();
    const events = this.upstream.postSse({
      path: PATH,
      body,
      signal,
      timeoutMs: req.timeoutMs,
      traceParent: req.traceParent,
      headers: convertAnthropicClientHeaders(req.request),
      idleTimeoutMs: req.idleTimeoutMs,
      isFinal: (message) => message.event === 'message_stop',
    });
    for await (const event of events) {
      const data = this.upstream.parseJson(event.data, 'SSE event');
      if (!isJsonObject(data)) throw this.upstream.malformed(`SSE event '${event.event ?? 'message'}' is not a JSON object`);
      // The SSE event name and data.type agree on Anthropic; data.type is authoritative.
      if (data.type === undefined && event.event !== undefined) data.type = event.event;
      const chunk = translator.translate(data);
      if (chunk !== undefined) {
        collector.addChunk(chunk);
        yield { type: 'chunk', chunk };
      }
      if (translator.finished) break;
    }
    if (!translator.finished) {
      throw new UpstreamError(`${this.name}: stream ended before message_stop`, { provider: this.name, failure: 'interrupted' });
    }
    const usage = translator.finalUsage ?? (await estimateUsage(req.request, collector.text()));
    yield { type: 'usage', usage: await countAnthropicReasoning(usage, translator.thinkingText) };
    yield { type: 'done', finishReason: translator.finishReason, rawFinishReason: translator.rawFinishReason };
  }

  async listModels(signal: AbortLink, timeoutMs: number): Promise<string[]> {
    const ids = parseUpstreamModelList(await this.upstream.getJson({ path: MODELS_PATH, signal, timeoutMs }));
    if (ids === undefined) throw this.upstream.malformed('model list is not a list of models');
    return ids;
  }

  async close(): Promise<void> {
    await Promise.all([this.upstream.close(), this.batches.close()]);
  }

  private bodyError(body: Record<string, unknown>): UpstreamError {
    const details = parseAnthropicErrorBody(body);
    return new UpstreamError(`${this.name}: upstream error ${this.upstream.safe(details.type ?? '')}: ${this.upstream.safe(details.message ?? 'no message')}`, {
      provider: this.name,
      failure: mapAnthropicErrorType(details),
      upstreamType: details.type,
    });
  }
}

/** The Anthropic client's own body, when this call may pass it through. */
function clientBody(req: ProviderRequest): Readonly<JsonObject> | undefined {
  return req.passThrough?.dialect === 'anthropic-messages' ? req.passThrough.body : undefined;
}

/**
 * The client's body with only what the call needs changed: `model` (kept in its place, so the rest stays
 * in the client's order) and `stream` where it differs. Everything else — block-level cache_control,
 * service_tier, context_management, fields Herd does not model — goes up as the client sent it.
 */
export function convertPassThroughBody(body: Readonly<JsonObject>, model: string, stream: boolean): JsonObject {
  const out: JsonObject = { ...body, model };
  if (stream) out.stream = true;
  else if (out.stream !== undefined && out.stream !== false) out.stream = false;
  return out;
}
