// The flow's one settlement, however a request ended (answer, stream, cache hit, embeddings, error): its
// ledger rows, the reservation, the TPM correction, the cache write and the metrics event, in that order.
import { escapeLogText } from '../../core/escape-log-text.ts';
import { type HerdError, toHerdError } from '../../core/errors.ts';
import type { FinishInput, FinishResult } from '../billing/billing-service.ts';
import type { Cost } from '../billing/price-usage.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { Usage } from '../protocol/chat-types.ts';
import { readUpstreamBytesOf } from '../protocol/upstream-bytes.ts';
import { UpstreamRouteError } from '../router/attempt-record.ts';
import { writeFlightCache } from './flight-cache.ts';
import type { ChatGatewayDeps, Ending, Flight, Progress, Settled } from './flight.ts';
import { estimateErrorStatus, mapStatusToClass, NO_PROVIDER, UNKNOWN_MODEL, type GatewayRequestEvent } from './gateway-observer.ts';

const usedTokens = (u: Usage) => u.promptTokens + u.completionTokens;
const nothing = (): void => undefined;

export class FlightSettlement {
  constructor(private readonly deps: ChatGatewayDeps) {}

  /**
   * Settles a request however it ended: queues its ledger rows and returns their commit (never
   * rejects) and the price they record. Reservation settlement, the TPM correction, the cache write and
   * metrics run after the current event-loop turn, in which the transport writes the answer; none of them
   * changes it.
   */
  settle(flight: Flight, ending: Ending): Settled {
    const finishing = this.deps.billing?.finishDurably(this.describeFinish(flight, ending));
    const billed = finishing?.done;
    void billed?.catch((err: unknown) => this.deps.log?.(`ledger: ${escapeLogText(String(err))}`));
    if (ending.outcome === 'error') {
      // A failure is counted by the flow's catch (reportFailure); the ticket is released there.
      return { committed: Promise.resolve(), cost: undefined };
    }
    if (ending.outcome === 'cache-hit') void flight.ticket?.settle(0);
    setImmediate(() => {
      try {
        this.afterAnswer(flight, ending, billed);
      } catch (err) {
        this.deps.log?.(`settling request ${escapeLogText(flight.base.requestId)}${traceOf(flight)}: ${escapeLogText(String(err))}`);
      }
    });
    // A batch line is marked done once this resolves, and a done line is never run again: its part of the batch's
    // reservation must be settled by then, or a replica killed in between leaves it answered but not charged.
    const durable = flight.base.batch !== undefined ? billed : finishing?.committed;
    return { committed: durable ? durable.then(nothing, nothing) : Promise.resolve(), cost: finishing?.cost };
  }

  /** A failed request: labelled by the last upstream tried, if any, with the status the transport will answer. */
  reportFailure(err: unknown, stream: boolean, dialect: IngressDialect | undefined, progress: Progress, t0: number): void {
    if (this.deps.observer === undefined) return;
    const error = toHerdError(err);
    const last = error instanceof UpstreamRouteError ? error.attempts.at(-1) : undefined;
    const event: GatewayRequestEvent = {
      model: last?.model ?? progress.model,
      provider: last?.provider ?? NO_PROVIDER,
      statusClass: mapStatusToClass(this.statusOf(error, dialect ?? 'openai-chat')),
      cache: progress.cache,
      stream,
    };
    if (!progress.calledUpstream) event.overheadMs = performance.now() - t0;
    this.notify(event);
  }

  /** A request refused before the flow (no valid key, a body that does not validate): no model, no provider. */
  reportRefused(error: HerdError, stream: boolean, dialect: IngressDialect): void {
    if (this.deps.observer === undefined) return;
    this.notify({ model: UNKNOWN_MODEL, provider: NO_PROVIDER, statusClass: mapStatusToClass(this.statusOf(error, dialect)), cache: 'off', stream });
  }

  private describeFinish(flight: Flight, ending: Ending): FinishInput {
    const { base, t0 } = flight;
    const latencyMs = performance.now() - t0;
    switch (ending.outcome) {
      case 'completion':
        return { outcome: 'completion', meta: ending.completion.meta, latencyMs, httpStatus: 200, ...base };
      case 'embedding':
        return { outcome: 'completion', meta: ending.meta, latencyMs, httpStatus: 200, ...base };
      case 'stream':
        return { outcome: 'stream', meta: ending.stream.meta, result: ending.result, ttftMs: ending.ttftMs, latencyMs, httpStatus: 200, ...base };
      case 'cache-hit': {
        const { answer } = ending;
        return {
          outcome: 'cache-hit',
          model: answer.model,
          provider: answer.provider,
          upstreamModel: answer.upstreamModel,
          usage: answer.usage,
          latencyMs,
          httpStatus: 200,
          ...base,
          reserved: false,
        };
      }
      case 'error':
        return { outcome: 'error', error: ending.error, httpStatus: this.statusOf(ending.error, base.dialect ?? 'openai-chat'), latencyMs, ...base, reserved: ending.reserved };
    }
  }

  /** The answered request's TPM correction, cache write and metrics. */
  private afterAnswer(flight: Flight, ending: Exclude<Ending, { outcome: 'error' }>, billed: Promise<FinishResult> | undefined): void {
    const startedAt = flight.base.startedAt;
    switch (ending.outcome) {
      case 'cache-hit': {
        const { answer } = ending;
        this.reportAnswer({ model: answer.model, provider: answer.provider, statusClass: '2xx', cache: 'hit', stream: ending.stream, overheadMs: ending.overheadMs }, billed, {
          usage: answer.usage,
          startedAt,
        });
        return;
      }
      case 'completion':
      case 'embedding': {
        const meta = ending.outcome === 'completion' ? ending.completion.meta : ending.meta;
        const cache = ending.outcome === 'completion' ? ending.cache : 'off';
        void flight.ticket?.settle(usedTokens(meta.usage));
        if (ending.outcome === 'completion') {
          const { response } = ending.completion;
          writeFlightCache(this.deps, flight, response, meta, meta.usage, billed, readUpstreamBytesOf(response));
        }
        this.reportAnswer(
          {
            model: meta.model,
            provider: meta.provider,
            statusClass: '2xx',
            cache,
            stream: false,
            tokens: meta.usage,
            upstreamMs: meta.upstreamMs,
            queuedMs: meta.queuedMs,
            overheadMs: ending.overheadMs,
          },
          billed,
          { usage: meta.usage, startedAt },
        );
        return;
      }
      case 'stream': {
        const { meta } = ending.stream;
        const { result } = ending;
        void flight.ticket?.settle(usedTokens(result.usage));
        if (ending.answer !== undefined) writeFlightCache(this.deps, flight, ending.answer.response, meta, result.usage, billed, ending.answer.bytes);
        this.reportAnswer(
          {
            model: meta.model,
            provider: meta.provider,
            statusClass: '2xx',
            cache: ending.cache,
            stream: true,
            tokens: result.usage,
            upstreamMs: meta.upstreamMs + result.streamMs,
            ttftMs: ending.ttftMs,
            queuedMs: meta.queuedMs,
            overheadMs: ending.overheadMs,
          },
          billed,
          { usage: result.usage, startedAt },
        );
        return;
      }
    }
  }

  /**
   * Reports an answered request once billing has priced it, so metrics and the ledger hold the same
   * cost; at once without billing. If the ledger cannot settle, the cost is priced here instead.
   */
  private reportAnswer(event: GatewayRequestEvent, billed: Promise<FinishResult> | undefined, priced: { usage: Usage; startedAt: number }): void {
    if (this.deps.observer === undefined) return;
    if (billed === undefined) {
      this.notify(event);
      return;
    }
    const settle = (cost: Cost | undefined) => {
      if (cost !== undefined) {
        if (event.cache === 'hit') event.savedUsdMicros = cost.usdMicros;
        else event.usdMicros = cost.usdMicros;
      }
      this.notify(event);
    };
    billed.then(
      (r) => settle(r.cost),
      () => settle(this.priceQuietly(event, priced)),
    );
  }

  private priceQuietly(event: GatewayRequestEvent, priced: { usage: Usage; startedAt: number }): Cost | undefined {
    try {
      return this.deps.billing?.price({ provider: event.provider, model: event.model, usage: priced.usage, atMs: priced.startedAt });
    } catch {
      return undefined;
    }
  }

  /** A broken observer must never fail or double-report a request. */
  private notify(event: GatewayRequestEvent): void {
    try {
      this.deps.observer?.onRequestFinished(event);
    } catch (err) {
      this.deps.log?.(`gateway observer: ${escapeLogText(String(err))}`);
    }
  }

  /** The HTTP status the client gets for a failure (the ledger's http_status, the metrics' class). */
  statusOf(error: HerdError, dialect: IngressDialect): number {
    return this.deps.errorStatus ? this.deps.errorStatus(error, dialect) : estimateErrorStatus(error);
  }
}

/** ` (trace <id>)` when the request was traced: a log line leads to the spans as the ledger row does. */
const traceOf = (flight: Flight): string => (flight.base.traceId === undefined ? '' : ` (trace ${flight.base.traceId})`);
