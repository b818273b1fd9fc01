// The INTERNAL span of one gateway operation (a chat request of any dialect, or embeddings): the parent of
// its upstream attempts' CLIENT spans, with what the flow decided (route, key, cache) and what it cost.
import type { HerdSpan } from '../../tracing/index.ts';
import { SpanKind } from '../../tracing/index.ts';
import type { FlowTracing } from './flow-tracing.ts';
import type { Cost } from '../billing/price-usage.ts';
import type { Flight, GatewayCaller } from './flight.ts';
import type { CacheOutcome } from './gateway-observer.ts';
import { GEN_AI } from './genai-attributes.ts';

/** Starts the operation's span under the caller's parent (the transport's SERVER span, or an llm model's step). */
export function startOperationSpan(tracing: FlowTracing, operation: 'chat' | 'embeddings', model: string, caller: GatewayCaller): HerdSpan {
  const span = tracing.tracer.startSpan(`gateway ${operation}`, { kind: SpanKind.INTERNAL, parent: caller.traceParent });
  if (span.recording) {
    span.setAttributes({
      [GEN_AI.operationName]: operation,
      [GEN_AI.requestModel]: model,
      'herd.key.id': caller.key.id,
      'herd.request.id': caller.requestId,
      'herd.dialect': caller.dialect ?? 'openai-chat',
      'herd.origin': caller.origin,
    });
  }
  return span;
}

/** Once admitted: the attempts hang under this span, the ledger row names its trace. */
export function traceFlight(tracing: FlowTracing, span: HerdSpan, flight: Flight): void {
  if (!tracing.tracer.enabled) return;
  const parent = span.context();
  flight.context.trace = { tracer: tracing.tracer, parent, captureContent: tracing.captureContent };
  flight.base.traceId = parent.traceId;
  if (span.recording) span.setAttributes({ 'herd.route': flight.route.rule, 'herd.model': flight.route.model.name, 'herd.request.id': flight.base.requestId });
}

/** Ends the span with the cache outcome and the price its ledger row records (a cache hit's: what it saved). */
export function endOperationSpan(span: HerdSpan, cache: CacheOutcome, cost: Cost | undefined): void {
  if (span.recording) {
    span.setAttributes({ 'herd.cache': cache, 'herd.cache.hit': cache === 'hit' });
    if (cost !== undefined) {
      span.setAttributes({ 'herd.cost': cost.costMicros / 1e6, 'herd.cost.currency': cost.currency, 'herd.cost.usd': cost.usdMicros / 1e6 });
    }
  }
  span.end();
}

export function failOperationSpan(span: HerdSpan, error: unknown): void {
  span.recordError(error);
  span.end();
}
