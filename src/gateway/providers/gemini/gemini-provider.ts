// Provider for the Gemini API: POST /{version}/models/{model}:generateContent, and
// :streamGenerateContent?alt=sse for streams; the key travels in the x-goog-api-key header.
import type { AbortLink } from '../../../core/abort-link.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';
import { convertUsageToOpenAI } from '../../wire/openai-chat/convert-usage-to-openai.ts';
import { collectResponseText, CompletionTextCollector, countTokens, estimateUsage } from '../../protocol/usage-estimate.ts';
import { parseUpstreamModelList } from '../parse-upstream-model-list.ts';
import { HttpUpstream } from '../http-upstream.ts';
import { bridgeUnmodeled } from '../bridge-unmodeled.ts';
import type { EmbedRequest, EmbedResult, Provider, ProviderRequest, ProviderResult, ProviderStreamEvent, ProviderWarning } from '../provider.ts';
import { DEFAULT_TIMEOUT_MS, type ProviderOptions } from '../provider-options.ts';
import { mapStatusToFailure, UpstreamError } from '../../protocol/upstream-error.ts';
import { convertGeminiEmbeddingsRequest, convertGeminiEmbeddingsResponse } from './convert-gemini-embeddings.ts';
import { convertGeminiRequest } from './convert-gemini-request.ts';
import type { GeminiRequest } from '../../wire/gemini/gemini-types.ts';
import { convertGeminiResponse, findGeminiFailure, isGeminiResponse } from '../../wire/gemini/convert-gemini-response.ts';
import { convertGeminiUsage } from '../../wire/gemini/convert-gemini-usage.ts';
import { GeminiStreamTranslator } from '../../wire/gemini/gemini-stream-translator.ts';
import { parseGeminiErrorBody } from '../../wire/gemini/parse-gemini-error.ts';

export interface GeminiProviderOptions extends ProviderOptions {
  /** API version path segment; default v1beta (where systemInstruction, tools and thinking live). */
  apiVersion?: string;
}

export function createGeminiProvider(options: GeminiProviderOptions): Provider {
  return new GeminiProvider(options);
}

class GeminiProvider implements Provider {
  readonly name: string;
  private readonly upstream: HttpUpstream;
  private readonly apiVersion: string;

  constructor(options: GeminiProviderOptions) {
    this.name = options.name;
    this.apiVersion = options.apiVersion ?? 'v1beta';
    this.upstream = new HttpUpstream({
      provider: options.name,
      baseUrl: options.baseUrl,
      headers: { ...options.headers, 'x-goog-api-key': options.apiKey },
      secrets: [options.apiKey],
      parseErrorBody: parseGeminiErrorBody,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      connections: options.connections,
    });
  }

  /** Every client is bridged here: the canonical request converted, plus what the bridge drops. */
  private translateRequest(req: ProviderRequest): { body: GeminiRequest; warnings: ProviderWarning[] } {
    const dropped = bridgeUnmodeled(req, this.name);
    const converted = convertGeminiRequest(req.request, req.upstreamModel);
    if (dropped.length > 0) converted.warnings.push(...dropped);
    return converted;
  }

  async chat(req: ProviderRequest, signal: AbortLink): Promise<ProviderResult> {
    const { body, warnings } = this.translateRequest(req);
    const raw = await this.upstream.postJson({ path: this.path(req.upstreamModel, 'generateContent'), body, signal, timeoutMs: req.timeoutMs, traceParent: req.traceParent });
    if (!isGeminiResponse(raw)) throw this.upstream.malformed('response is not a GenerateContentResponse');
    const failure = findGeminiFailure(raw, this.name, (text) => this.upstream.safe(text));
    if (failure !== undefined) throw failure;
    if (raw.candidates === undefined || raw.candidates.length === 0) throw this.upstream.malformed('response has no candidates');
    const response = convertGeminiResponse(raw, req.upstreamModel);
    const usage = raw.usageMetadata !== undefined ? convertGeminiUsage(raw.usageMetadata) : await estimateUsage(req.request, collectResponseText(response));
    response.usage = convertUsageToOpenAI(usage);
    return { response, usage, rawFinishReason: raw.candidates[0].finishReason ?? null, warnings };
  }

  async *stream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const { body, warnings } = this.translateRequest(req);
    if (warnings.length > 0) yield { type: 'warnings', warnings };
    const translator = new GeminiStreamTranslator(this.name, req.upstreamModel, (text) => this.upstream.safe(text));
    const collector = new CompletionTextCollector();
    const events = this.upstream.postSse({
      path: `${this.path(req.upstreamModel, 'streamGenerateContent')}?alt=sse`,
      body,
      signal,
      timeoutMs: req.timeoutMs,
      traceParent: req.traceParent,
      idleTimeoutMs: req.idleTimeoutMs,
    });
    for await (const event of events) {
      const data = this.upstream.parseJson(event.data, 'SSE event');
      if (isJsonObject(data) && data.error !== undefined) throw this.streamError(data);
      if (!isGeminiResponse(data)) throw this.upstream.malformed('SSE event is not a GenerateContentResponse');
      const chunk = translator.translate(data);
      if (chunk === undefined) continue;
      collector.addChunk(chunk);
      yield { type: 'chunk', chunk };
    }
    if (!translator.complete) {
      throw new UpstreamError(`${this.name}: stream ended before a finishReason`, { provider: this.name, failure: 'interrupted' });
    }
    yield { type: 'usage', usage: translator.finalUsage ?? (await estimateUsage(req.request, collector.text())) };
    yield { type: 'done', finishReason: translator.finishReason, rawFinishReason: translator.rawFinishReason };
  }

  /** batchEmbedContents for any number of texts; Gemini reports no usage, so Herd counts the tokens (estimated). */
  async embed(req: EmbedRequest, signal: AbortLink): Promise<EmbedResult> {
    const raw = await this.upstream.postJson({
      path: this.path(req.upstreamModel, 'batchEmbedContents'),
      body: convertGeminiEmbeddingsRequest(req),
      signal,
      timeoutMs: req.timeoutMs,
      traceParent: req.traceParent,
    });
    if (isJsonObject(raw) && raw.error !== undefined) throw this.streamError(raw);
    const vectors = convertGeminiEmbeddingsResponse(raw, req.inputs.length);
    if (typeof vectors === 'string') throw this.upstream.malformed(vectors);
    let promptTokens = 0;
    for (const text of req.inputs) promptTokens += await countTokens(text);
    return { vectors, usage: { promptTokens, estimated: true } };
  }

  async listModels(signal: AbortLink, timeoutMs: number): Promise<string[]> {
    const ids = parseUpstreamModelList(await this.upstream.getJson({ path: `/${this.apiVersion}/models?pageSize=1000`, signal, timeoutMs }));
    if (ids === undefined) throw this.upstream.malformed('model list is not a list of models');
    return ids;
  }

  close(): Promise<void> {
    return this.upstream.close();
  }

  private path(model: string, method: string): string {
    const id = model.startsWith('models/') ? model.slice('models/'.length) : model;
    return `/${this.apiVersion}/models/${encodeURIComponent(id)}:${method}`;
  }

  /** Google sends a mid-stream failure (or a 200 that failed) as a normal error body. */
  private streamError(data: Record<string, unknown>): UpstreamError {
    const details = parseGeminiErrorBody(data);
    const error = isJsonObject(data.error) ? data.error : {};
    const status = typeof error.code === 'number' ? error.code : undefined;
    const failure = details.failure ?? (status !== undefined ? mapStatusToFailure(status) : 'server_error');
    return new UpstreamError(`${this.name}: upstream stream error ${this.upstream.safe(details.type ?? '')}: ${this.upstream.safe(details.message ?? 'no message')}`, {
      provider: this.name,
      failure,
      status,
      upstreamType: details.type,
      retryAfterSeconds: details.retryAfterSeconds,
    });
  }
}
