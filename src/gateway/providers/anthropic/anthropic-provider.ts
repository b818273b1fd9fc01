// Provider for Anthropic's Messages API (POST /v1/messages, x-api-key, anthropic-version 2023-06-01).
import type { AbortLink } from '../../../core/abort-link.ts';
import { collectResponseText, CompletionTextCollector, estimateUsage } from '../../usage-estimate.ts';
import { convertUsageToOpenAI } from '../../convert-usage-to-openai.ts';
import { isJsonObject } from '../../check-json-value.ts';
import { HttpUpstream } from '../http-upstream.ts';
import type { Provider, ProviderRequest, ProviderResult, ProviderStreamEvent } from '../provider.ts';
import { DEFAULT_TIMEOUT_MS, type ProviderOptions } from '../provider-options.ts';
import { UpstreamError } from '../upstream-error.ts';
import { AnthropicStreamTranslator } from './anthropic-stream-translator.ts';
import { convertAnthropicClientHeaders, convertAnthropicRequest, DEFAULT_ANTHROPIC_MAX_TOKENS } from './convert-anthropic-request.ts';
import { convertAnthropicResponse, isAnthropicResponse } from './convert-anthropic-response.ts';
import { convertAnthropicUsage } from './convert-anthropic-usage.ts';
import { mapAnthropicErrorType, parseAnthropicErrorBody } from './map-anthropic-error.ts';

export const ANTHROPIC_VERSION = '2023-06-01';
const PATH = '/v1/messages';

export interface AnthropicProviderOptions extends ProviderOptions {
  /** max_tokens sent when the client set neither max_tokens nor max_completion_tokens. */
  defaultMaxTokens?: number;
}

export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  return new AnthropicProvider(options);
}

class AnthropicProvider implements Provider {
  readonly name: string;
  private readonly upstream: HttpUpstream;
  private readonly defaultMaxTokens: number;

  constructor(options: AnthropicProviderOptions) {
    this.name = options.name;
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
    const { body, warnings } = convertAnthropicRequest(req.request, req.upstreamModel, { defaultMaxTokens: this.defaultMaxTokens, stream: false });
    const raw = await this.upstream.postJson({ path: PATH, body, signal, timeoutMs: req.timeoutMs, headers: convertAnthropicClientHeaders(req.request) });
    if (!isAnthropicResponse(raw)) {
      if (isJsonObject(raw) && raw.type === 'error') throw this.bodyError(raw);
      throw this.upstream.malformed('response is not a Messages API message');
    }
    const response = convertAnthropicResponse(raw);
    let usage = convertAnthropicUsage(raw.usage);
    if (typeof raw.usage.input_tokens !== 'number' || typeof raw.usage.output_tokens !== 'number') {
      usage = await estimateUsage(req.request, collectResponseText(response));
      response.usage = convertUsageToOpenAI(usage);
    }
    return { response, usage, rawFinishReason: raw.stop_reason, warnings };
  }

  async *stream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const { body, warnings } = convertAnthropicRequest(req.request, req.upstreamModel, { defaultMaxTokens: this.defaultMaxTokens, stream: true });
    if (warnings.length > 0) yield { type: 'warnings', warnings };
    const translator = new AnthropicStreamTranslator(this.name, (text) => this.upstream.safe(text));
    const collector = new CompletionTextCollector();
    const events = this.upstream.postSse({
      path: PATH,
      body,
      signal,
      timeoutMs: req.timeoutMs,
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
    yield { type: 'usage', usage: translator.finalUsage ?? (await estimateUsage(req.request, collector.text())) };
    yield { type: 'done', finishReason: translator.finishReason, rawFinishReason: translator.rawFinishReason };
  }

  close(): Promise<void> {
    return this.upstream.close();
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
