// Provider for any OpenAI-compatible upstream (HolySheep and other relays, OpenAI, DeepSeek): the
// request passes through with the model replaced; responses and chunks come back nearly untouched.
// Responses and legacy completions clients reach the upstream's own /responses and /completions when
// it offers them (`endpoints`), and its chat completions through the canonical shape otherwise.
import type { AbortLink } from '../../../core/abort-link.ts';
import type { OpenAIExtraEndpoint } from '../../../config/gateway-config-schema.ts';
import type { ChatChunk, ChatResponse, FinishReason, Usage } from '../../protocol/chat-types.ts';
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';
import { convertUsageToOpenAI } from '../../wire/openai-chat/convert-usage-to-openai.ts';
import { collectChatDataText } from '../../wire/openai-chat/parse-chat-sse-chunks.ts';
import { convertCompletionsToChat, parseCompletionsSseChunks } from '../../wire/openai-completions/convert-completions-to-chat.ts';
import { convertResponsesToChat } from '../../wire/openai-responses/convert-responses-to-chat.ts';
import { parseResponsesSseChunks } from '../../wire/openai-responses/parse-responses-sse-chunks.ts';
import { collectChunksText, collectResponseText, CompletionTextCollector, countTokens, estimateUsage } from '../../protocol/usage-estimate.ts';
import { attachUpstreamBytes } from '../../protocol/upstream-bytes.ts';
import { parseUpstreamModelList } from '../parse-upstream-model-list.ts';
import { HttpUpstream, type SseRead } from '../http-upstream.ts';
import { SseEventSplitter } from '../../wire/split-sse-events.ts';
import { OpenAIChatPassThrough } from '../../wire/openai-chat/pass-openai-chat-events.ts';
import { OpenAIResponsesPassThrough } from '../../wire/openai-responses/pass-openai-responses-events.ts';
import type { EmbedRequest, EmbedResult, ProviderRequest, ProviderResult, ProviderStreamEvent, ProviderWarning } from '../provider.ts';
import { DEFAULT_TIMEOUT_MS, type ProviderOptions } from '../provider-options.ts';
import { UpstreamError } from '../../protocol/upstream-error.ts';
import { convertOpenAIEmbeddingsRequest, convertOpenAIEmbeddingsResponse } from './convert-openai-embeddings.ts';
import { bridgeUnmodeled } from '../bridge-unmodeled.ts';
import { convertOpenAIReasoning } from './convert-openai-reasoning.ts';
import { convertOpenAIRequest } from './convert-openai-request.ts';
import { createPassThroughBody } from '../../wire/openai-chat/create-pass-through-body.ts';
import { convertOpenAIUsage } from '../../wire/openai-chat/convert-openai-usage.ts';
import { mapOpenAIFinishReason } from '../../wire/openai-chat/map-openai-finish-reason.ts';
import { parseOpenAIErrorBody } from '../../wire/openai-chat/parse-openai-error.ts';
import type { BatchCapableProvider, UpstreamBatchClient } from '../upstream-batch-client.ts';
import { createOpenAIBatchClient } from './openai-batch-client.ts';

const PATH = '/chat/completions';
const MODELS_PATH = '/models';
const EMBEDDINGS_PATH = '/embeddings';
const RESPONSES_PATH = '/responses';
const COMPLETIONS_PATH = '/completions';

/** A same-dialect request this upstream takes on its own endpoint: the client's body, the model replaced. */
interface EndpointPass {
  endpoint: OpenAIExtraEndpoint;
  body: Readonly<JsonObject>;
}

export function createOpenAIProvider(options: ProviderOptions): BatchCapableProvider {
  return new OpenAIProvider(options);
}

class OpenAIProvider implements BatchCapableProvider {
  readonly name: string;
  /** Files + Batch API on the same account (relays may lack it: the configuration says whether Herd uses it). */
  readonly batches: UpstreamBatchClient;
  private readonly upstream: HttpUpstream;
  private readonly endpoints: ReadonlySet<OpenAIExtraEndpoint>;

  constructor(options: ProviderOptions) {
    this.name = options.name;
    this.batches = createOpenAIBatchClient(options);
    this.endpoints = new Set(options.endpoints ?? []);
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
    const pass = this.endpointPass(req);
    if (pass !== undefined) return pass.endpoint === 'responses' ? this.passResponses(req, pass, signal) : this.passCompletions(req, pass, signal);
    const warnings = this.bridgeWarnings(req);
    const own = chatBody(req);
    const { body, text } = await this.upstream.postJsonText({
      path: PATH,
      body: own === undefined ? convertOpenAIRequest(req.request, req.upstreamModel, false) : createPassThroughBody(own, req.upstreamModel, false),
      signal,
      timeoutMs: req.timeoutMs,
      traceParent: req.traceParent,
    });
    const response = this.checkResponse(body);
    // Same dialect as an OpenAI chat client: the bytes go on as sent, usage details Herd does not model included.
    attachUpstreamBytes(response, text);
    const rawReason = rawFinishReason(body);
    for (const choice of response.choices) choice.finish_reason = mapOpenAIFinishReason(choice.finish_reason);
    const usage = convertOpenAIUsage(response.usage) ?? (await estimateUsage(req.request, collectResponseText(response)));
    response.usage = convertUsageToOpenAI(usage);
    return { response, usage, rawFinishReason: rawReason, warnings };
  }

  /** A client of another dialect bridged onto chat: what its body has that chat cannot carry. */
  private bridgeWarnings(req: ProviderRequest): ProviderWarning[] {
    if (req.passThrough?.dialect === 'openai-chat') return [];
    const dropped = bridgeUnmodeled(req, this.name);
    const reasoning = convertOpenAIReasoning(req.request)?.warnings ?? [];
    return reasoning.length === 0 ? dropped : [...dropped, ...reasoning];
  }

  stream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const pass = this.endpointPass(req);
    if (pass !== undefined) return pass.endpoint === 'responses' ? this.passResponsesStream(req, pass, signal) : this.passStream(req, signal, pass);
    return req.passThrough?.dialect === 'openai-chat' ? this.passStream(req, signal) : this.translateStream(req, signal);
  }

  /** The client's own endpoint, when it spoke Responses or completions and this upstream offers it. */
  private endpointPass(req: ProviderRequest): EndpointPass | undefined {
    const pass = req.passThrough;
    if (pass?.body === undefined) return undefined;
    const endpoint = pass.dialect === 'openai-responses' ? 'responses' : pass.dialect === 'openai-completions' ? 'completions' : undefined;
    return endpoint !== undefined && this.endpoints.has(endpoint) ? { endpoint, body: pass.body } : undefined;
  }

  /** A Responses client on /responses: the answer's bytes go on as sent, read back as chat for the ledger and cache. */
  private async passResponses(req: ProviderRequest, pass: EndpointPass, signal: AbortLink): Promise<ProviderResult> {
    const { body, text } = await this.upstream.postJsonText({
      path: RESPONSES_PATH,
      body: createPassThroughBody(pass.body, req.upstreamModel, false),
      signal,
      timeoutMs: req.timeoutMs,
      traceParent: req.traceParent,
    });
    if (isJsonObject(body) && (body.status === 'failed' || (body.object !== 'response' && body.error != null))) throw this.errorInBody({ error: body.error });
    const read = convertResponsesToChat(body);
    if (read === undefined) throw this.upstream.malformed('response is not a Responses `response` object (no output)');
    const { response } = read;
    attachUpstreamBytes(response, text, 'openai-responses');
    const usage = read.usage ?? (await estimateUsage(req.request, collectResponseText(response)));
    response.usage = convertUsageToOpenAI(usage);
    return { response, usage, rawFinishReason: read.rawStatus, warnings: [] };
  }

  /** A legacy completions client on /completions: as passResponses, for text_completion objects. */
  private async passCompletions(req: ProviderRequest, pass: EndpointPass, signal: AbortLink): Promise<ProviderResult> {
    const { body, text } = await this.upstream.postJsonText({
      path: COMPLETIONS_PATH,
      body: createPassThroughBody(pass.body, req.upstreamModel, false),
      signal,
      timeoutMs: req.timeoutMs,
      traceParent: req.traceParent,
    });
    if (isJsonObject(body) && body.error != null) throw this.errorInBody(body);
    const response = convertCompletionsToChat(body);
    if (response === undefined) throw this.upstream.malformed('response is not a text_completion (no choices)');
    attachUpstreamBytes(response, text, 'openai-completions');
    const usage = (isJsonObject(body) ? convertOpenAIUsage(body.usage) : undefined) ?? (await estimateUsage(req.request, collectResponseText(response)));
    response.usage = convertUsageToOpenAI(usage);
    return { response, usage, rawFinishReason: rawFinishReason(body), warnings: [] };
  }

  /** A Responses client streaming from /responses: the typed events go on as sent; response.completed ends it. */
  private async *passResponsesStream(req: ProviderRequest, pass: EndpointPass, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const reading: SseRead = { sawEvent: false, sawFinal: false };
    const texts = this.upstream.postSseText(
      {
        path: RESPONSES_PATH,
        body: createPassThroughBody(pass.body, req.upstreamModel, false),
        signal,
        timeoutMs: req.timeoutMs,
        traceParent: req.traceParent,
        idleTimeoutMs: req.idleTimeoutMs,
      },
      reading,
    );
    const splitter = new SseEventSplitter();
    const events = new OpenAIResponsesPassThrough();
    const piece = (text: string, chunks: number): ProviderStreamEvent => ({ type: 'raw', text, dialect: 'openai-responses', chunks, model: events.model });
    for await (const text of texts) {
      let out = '';
      const before = events.chunks;
      for (const block of splitter.feed(text)) {
        if (block.data !== undefined) reading.sawEvent = true;
        const decision = events.read(block);
        if (decision.kind === 'forward') {
          out += block.text;
          continue;
        }
        // What came before the final or failing event in this read goes to the client first, as it would have.
        if (out !== '') yield piece(out, events.chunks - before);
        out = '';
        if (decision.kind === 'error') throw this.errorInBody(decision.body);
        if (decision.kind === 'malformed') throw this.upstream.malformed(decision.detail);
        // The last event leaves as a piece of its own, which the flow holds until the ledger has the rows.
        yield piece(block.text, 0);
        reading.sawFinal = true;
        break;
      }
      if (out !== '') yield piece(out, events.chunks - before);
      if (reading.sawFinal) break;
    }
    if (!reading.sawFinal) {
      throw new UpstreamError(`${this.name}: stream ended before response.completed`, { provider: this.name, failure: 'interrupted' });
    }
    const usage = events.usage ?? (await estimateUsage(req.request, collectChunksText(parseResponsesSseChunks(events.texts))));
    // The usage is in response.completed, which the client already has.
    yield { type: 'usage', usage, delivered: true };
    yield { type: 'done', finishReason: events.finishReason, rawFinishReason: events.rawStatus };
  }

  /**
   * An OpenAI chat client (or, with `endpoint`, a legacy completions client on /completions, whose
   * chunks have the same framing): the upstream's events go on as its bytes, read for usage as they pass.
   */
  private async *passStream(req: ProviderRequest, signal: AbortLink, endpoint?: EndpointPass): AsyncGenerator<ProviderStreamEvent> {
    const reading: SseRead = { sawEvent: false, sawFinal: false };
    const dialect = endpoint === undefined ? 'openai-chat' : 'openai-completions';
    const texts = this.upstream.postSseText(
      {
        path: endpoint === undefined ? PATH : COMPLETIONS_PATH,
        body: streamBody(req, endpoint),
        signal,
        timeoutMs: req.timeoutMs,
        traceParent: req.traceParent,
        idleTimeoutMs: req.idleTimeoutMs,
      },
      reading,
    );
    const splitter = new SseEventSplitter();
    const includeUsage = endpoint === undefined ? req.request.stream_options?.include_usage === true : asksForUsage(endpoint.body);
    const pass = new OpenAIChatPassThrough(includeUsage, convertOpenAIUsage);
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
        yield { type: 'raw', text: out, dialect, chunks: pass.chunks - before, model: pass.model };
      }
      if (reading.sawFinal) break;
    }
    if (!reading.sawFinal && pass.finishReason === null) {
      throw new UpstreamError(`${this.name}: stream ended before [DONE]`, { provider: this.name, failure: 'interrupted' });
    }
    const text = endpoint === undefined ? collectChatDataText(pass.data) : collectChunksText(parseCompletionsSseChunks(pass.data.map((data) => `data: ${data}\n\n`)));
    const usage = pass.usage ?? (await estimateUsage(req.request, text));
    yield { type: 'usage', usage, delivered: pass.usage !== undefined };
    yield { type: 'done', finishReason: pass.finishReason, rawFinishReason: pass.rawFinishReason };
  }

  private async *translateStream(req: ProviderRequest, signal: AbortLink): AsyncGenerator<ProviderStreamEvent> {
    const warnings = this.bridgeWarnings(req);
    if (warnings.length > 0) yield { type: 'warnings', warnings };
    const events = this.upstream.postSse({
      path: PATH,
      body: convertOpenAIRequest(req.request, req.upstreamModel, true),
      signal,
      timeoutMs: req.timeoutMs,
      traceParent: req.traceParent,
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
    const body = await this.upstream.postJson({ path: EMBEDDINGS_PATH, body: convertOpenAIEmbeddingsRequest(req), signal, timeoutMs: req.timeoutMs, traceParent: req.traceParent });
    if (isJsonObject(body) && body.error != null) throw this.errorInBody(body);
    const answer = convertOpenAIEmbeddingsResponse(body, req.inputs.length);
    if (typeof answer === 'string') throw this.upstream.malformed(answer);
    if (answer.promptTokens !== undefined) return { vectors: answer.vectors, usage: { promptTokens: answer.promptTokens } };
    let promptTokens = 0;
    for (const text of req.inputs) promptTokens += await countTokens(text);
    return { vectors: answer.vectors, usage: { promptTokens, estimated: true } };
  }

  async listModels(signal: AbortLink, timeoutMs: number): Promise<string[]> {
    const ids = parseUpstreamModelList(await this.upstream.getJson({ path: MODELS_PATH, signal, timeoutMs }));
    if (ids === undefined) throw this.upstream.malformed('model list is not a list of models');
    return ids;
  }

  async close(): Promise<void> {
    await Promise.all([this.upstream.close(), this.batches.close()]);
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

/** An OpenAI chat client's own body, when the transport handed it over (a serving-side caller has none). */
function chatBody(req: ProviderRequest): Readonly<JsonObject> | undefined {
  return req.passThrough?.dialect === 'openai-chat' ? req.passThrough.body : undefined;
}

/** What a chat or completions pass-through stream sends: the client's body (usage forced on), else the canonical request. */
function streamBody(req: ProviderRequest, endpoint: EndpointPass | undefined): unknown {
  const own = endpoint?.body ?? chatBody(req);
  return own === undefined ? convertOpenAIRequest(req.request, req.upstreamModel, true) : createPassThroughBody(own, req.upstreamModel, true);
}

function asksForUsage(body: Readonly<JsonObject>): boolean {
  return isJsonObject(body.stream_options) && body.stream_options.include_usage === true;
}

function rawFinishReason(body: unknown): string | null {
  if (!isJsonObject(body) || !Array.isArray(body.choices)) return null;
  const first: unknown = body.choices[0];
  return isJsonObject(first) && typeof first.finish_reason === 'string' ? first.finish_reason : null;
}
