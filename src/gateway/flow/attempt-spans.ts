// One CLIENT span per upstream attempt, named and attributed by the OpenTelemetry GenAI semantic conventions
// (names in genai-attributes.ts, version in docs/observability.md), with Herd's own facts under herd.*.
import type { ProviderType } from '../../config/gateway-config-schema.ts';
import { SpanKind, type HerdSpan, type TraceParent, type Tracer } from '../../tracing/index.ts';
import type { ChatRequest, ChatResponse, Usage } from '../protocol/chat-types.ts';
import { UpstreamError } from '../protocol/upstream-error.ts';
import type { BreakerRegistry } from '../resilience/circuit-breaker.ts';
import type { CatalogProvider } from '../router/gateway-catalog.ts';
import type { AttemptTarget } from '../router/run-attempts.ts';
import { GEN_AI } from './genai-attributes.ts';

/** What the flow hands the attempts when tracing is on: the operation span's context and the settings. */
export interface AttemptTracing {
  tracer: Tracer;
  /** The operation span: every attempt is its child. */
  parent: TraceParent;
  /** tracing.capture_content: the messages and the answer as gen_ai.input/output.messages. */
  captureContent: boolean;
}

/** What a finished attempt reports, for the GenAI client metrics (gen_ai.client.*). */
export interface AttemptMeasure {
  operation: string;
  provider: string;
  requestModel: string;
  responseModel: string | undefined;
  seconds: number;
  errorType: string | undefined;
  usage: Usage | undefined;
}

/** Where finished attempts are measured; absent: no GenAI metrics. */
export type AttemptMeter = (measure: AttemptMeasure) => void;

/** The spans of one operation's attempts: starts each, ends failed ones, leaves the answering one to its caller. */
export class AttemptSpans {
  private count = 0;
  private lastFailure: { model: string; failure: string } | undefined;
  /** The span of the attempt that answered, once one did. */
  answered: HerdSpan | undefined;
  private answeredAt = 0;
  private answeredTarget: AttemptTarget | undefined;

  constructor(
    private readonly tracing: AttemptTracing,
    private readonly operation: 'chat' | 'embeddings',
    private readonly request: ChatRequest,
    private readonly stream: boolean,
    private readonly breakers: BreakerRegistry,
    private readonly meter: AttemptMeter | undefined,
  ) {}

  /** Runs `attempt` under its own span; the span's context goes upstream as traceparent. */
  async run<T>(target: AttemptTarget, attempt: (traceParent: TraceParent) => Promise<T>): Promise<T> {
    this.count += 1;
    const span = this.tracing.tracer.startSpan(`${this.operation} ${target.upstreamModel}`, { kind: SpanKind.CLIENT, parent: this.tracing.parent });
    const startedAt = performance.now();
    if (span.recording) this.describeStart(span, target);
    try {
      const value = await attempt(span.context());
      this.answered = span;
      this.answeredAt = startedAt;
      this.answeredTarget = target;
      if (this.stream && span.recording) {
        const ttft = (performance.now() - startedAt) / 1000;
        span.setAttribute(GEN_AI.responseTimeToFirstChunk, ttft);
        span.addEvent('gen_ai.first_chunk', { [GEN_AI.responseTimeToFirstChunk]: ttft });
      }
      return value;
    } catch (err) {
      span.recordError(err);
      if (err instanceof UpstreamError) {
        span.setAttribute('error.type', err.failure);
        if (err.status !== undefined) span.setAttribute('http.response.status_code', err.status);
        this.lastFailure = { model: target.model.name, failure: err.failure };
      }
      span.end();
      this.measure(target, startedAt, err instanceof UpstreamError ? err.failure : errorTypeOf(err), undefined, undefined);
      throw err;
    }
  }

  /** Ends the answering attempt's span with what the answer says (a chat completion, an embeddings count, a stream's end). */
  finish(facts: { response?: ChatResponse; responseId?: string | undefined; usage: Usage; finishReasons?: readonly string[]; error?: unknown }): void {
    const span = this.answered;
    const target = this.answeredTarget;
    if (span === undefined || target === undefined) return;
    const responseModel = facts.response?.model;
    if (span.recording) {
      const response = facts.response;
      span.setAttributes({
        [GEN_AI.responseModel]: responseModel,
        [GEN_AI.responseId]: response?.id ?? facts.responseId,
        [GEN_AI.responseFinishReasons]: facts.finishReasons ?? response?.choices.map((c) => c.finish_reason ?? 'null'),
        ...usageAttributes(facts.usage),
      });
      if (this.tracing.captureContent && response !== undefined) span.setAttribute(GEN_AI.outputMessages, JSON.stringify(outputMessages(response)));
      if (facts.error !== undefined) span.recordError(facts.error);
    }
    span.end();
    this.measure(target, this.answeredAt, facts.error === undefined ? undefined : errorTypeOf(facts.error), responseModel, facts.usage);
    this.answered = undefined;
  }

  private describeStart(span: HerdSpan, target: AttemptTarget): void {
    const { request } = this;
    const provider = target.deployment.provider;
    const server = upstreamOf(provider);
    span.setAttributes({
      [GEN_AI.operationName]: this.operation,
      [GEN_AI.providerName]: server.genAiName,
      [GEN_AI.requestModel]: target.upstreamModel,
      [GEN_AI.requestMaxTokens]: request.max_completion_tokens ?? request.max_tokens,
      [GEN_AI.requestTemperature]: request.temperature,
      [GEN_AI.requestTopP]: request.top_p,
      [GEN_AI.requestStream]: this.stream,
      'server.address': server.address,
      'server.port': server.port,
      'herd.model': target.model.name,
      'herd.provider': provider.name,
      'herd.deployment': target.deployment.key,
      'herd.attempt': this.count,
      'herd.breaker.state': this.breakers.peek(target.deployment.key),
    });
    const fallback = this.lastFailure;
    if (fallback !== undefined && fallback.model !== target.model.name) {
      span.setAttributes({ 'herd.fallback.from': fallback.model, 'herd.fallback.reason': fallback.failure });
    }
    if (this.tracing.captureContent && this.operation === 'chat') span.setAttribute(GEN_AI.inputMessages, JSON.stringify(request.messages));
  }

  private measure(target: AttemptTarget, startedAt: number, errorType: string | undefined, responseModel: string | undefined, usage: Usage | undefined): void {
    this.meter?.({
      operation: this.operation,
      provider: upstreamOf(target.deployment.provider).genAiName,
      requestModel: target.upstreamModel,
      responseModel,
      seconds: (performance.now() - startedAt) / 1000,
      errorType,
      usage,
    });
  }
}

/** The usage attributes: cache reads and writes are part of the input tokens, reasoning part of the output. */
export function usageAttributes(usage: Usage): Record<string, number> {
  return {
    [GEN_AI.usageInputTokens]: usage.promptTokens,
    [GEN_AI.usageOutputTokens]: usage.completionTokens,
    [GEN_AI.usageCacheReadInputTokens]: usage.cachedPromptTokens,
    [GEN_AI.usageCacheCreationInputTokens]: usage.cacheWriteTokens,
    [GEN_AI.usageReasoningOutputTokens]: usage.reasoningTokens,
  };
}

const PROVIDER_NAMES: Readonly<Record<ProviderType, string>> = { openai: 'openai', anthropic: 'anthropic', gemini: 'gcp.gemini', triton: 'triton' };

/** gen_ai.provider.name: the conventions' well-known value where the upstream is one (DeepSeek behind the openai type), else the type's. */
export function genAiProviderName(provider: CatalogProvider): string {
  if (provider.type === 'openai') {
    const host = provider.baseUrl === undefined ? '' : hostOf(provider.baseUrl);
    if (provider.name === 'deepseek' || host.endsWith('deepseek.com')) return 'deepseek';
  }
  return PROVIDER_NAMES[provider.type];
}

interface UpstreamFacts {
  genAiName: string;
  address: string | undefined;
  port: number | undefined;
}

/** Per provider, worked out once: a URL parse per attempt was measurable at the gateway's rates. */
const upstreams = new WeakMap<CatalogProvider, UpstreamFacts>();

function upstreamOf(provider: CatalogProvider): UpstreamFacts {
  let facts = upstreams.get(provider);
  if (facts === undefined) {
    const url = provider.baseUrl !== undefined && URL.canParse(provider.baseUrl) ? new URL(provider.baseUrl) : undefined;
    const port = url === undefined ? undefined : url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
    facts = { genAiName: genAiProviderName(provider), address: url?.hostname, port };
    upstreams.set(provider, facts);
  }
  return facts;
}

function hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).hostname : '';
}

function errorTypeOf(err: unknown): string {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'Error';
}

function outputMessages(response: ChatResponse): unknown[] {
  return response.choices.map((c) => ({ role: 'assistant', content: c.message.content, finish_reason: c.finish_reason }));
}
