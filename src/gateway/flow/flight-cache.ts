// The flow's cache branch: the entry key of a request (partitioned per gateway key unless cache.scope is
// shared), the answer from a hit (settled as one), and the write of an answered request the policy allows.
import { escapeLogText } from '../../core/escape-log-text.ts';
import type { ChatRequest, ChatResponse, Usage } from '../protocol/chat-types.ts';
import type { FinishResult } from '../billing/billing-service.ts';
import { captureCachedBytes, type CapturedBytes } from '../cache/cached-bytes.ts';
import { evaluateCachedAnswer } from '../cache/cache-policy.ts';
import { computeCacheKey } from '../cache/compute-cache-key.ts';
import { describeByteReplay } from '../cache/describe-byte-replay.ts';
import { convertCachedToResponse, createCacheHitMeta, createCachedStream } from '../cache/replay-cached-answer.ts';
import type { ResolvedRoute } from '../router/resolve-route.ts';
import { isFinalRawPiece } from '../wire/is-final-raw-piece.ts';
import type { CacheScope, ChatGatewayDeps, Ending, Flight, GatewayAnswer, GatewayCaller, Settled } from './flight.ts';
import { holdStreamEnd } from './hold-stream-end.ts';

/**
 * The cache key of a request. With scope `key` (the default) the partition is the caller's gateway key:
 * another key sending the same request misses, so no key can read or probe another's answers.
 */
export function computeFlightCacheKey(request: ChatRequest, route: ResolvedRoute, caller: GatewayCaller, scope: CacheScope = 'key'): string {
  return computeCacheKey({
    request,
    // A pattern route may send the client's own id upstream ({model}): two ids are two upstream models.
    model: route.kind === 'pattern' ? `${route.model.name} ${route.requested}` : route.model.name,
    space: caller.dialect === 'openai-completions' ? 'completions' : undefined,
    partition: scope === 'shared' ? undefined : `key:${caller.key.id}`,
  });
}

/** A stored answer for this request, settled as a hit, in the caller's mode; undefined on a miss. */
export async function answerFromCache(deps: ChatGatewayDeps, flight: Flight, settle: (flight: Flight, ending: Ending) => Settled): Promise<GatewayAnswer | undefined> {
  const { policy, cacheKey, request, route } = flight;
  if (!policy?.read || cacheKey === undefined || deps.cache === undefined) return undefined;
  const model = route.model.name;
  const hit = await deps.cache.store.lookup(cacheKey, (a) => evaluateCachedAnswer(a.response, { model, optedIn: policy.optedIn }).cacheable);
  if (!hit) return undefined;
  const answer = hit.answer;
  const meta = createCacheHitMeta(answer, {
    requestedModel: request.model,
    route: route.kind,
    routeRule: route.rule,
    ...(route.tier ? { tier: route.tier } : {}),
    overheadMs: performance.now() - flight.t0,
  });
  const stream = request.stream === true;
  const { committed, cost } = settle(flight, { outcome: 'cache-hit', answer, stream, overheadMs: performance.now() - flight.t0 });
  // The stored upstream bytes, when this caller takes bytes of their dialect, mode and variant; else canonical.
  const bytes = describeByteReplay(flight.context.passThrough, request);
  if (stream) {
    const cached = createCachedStream(answer, { includeUsage: request.stream_options?.include_usage === true, bytes });
    return { kind: 'stream', stream: { meta, ...cached, chunks: holdStreamEnd(cached.chunks, () => committed, isFinalRawPiece) }, cache: 'hit', cost: Promise.resolve(cost) };
  }
  await committed;
  return { kind: 'completion', response: convertCachedToResponse(answer, { bytes }), meta, cache: 'hit', cost };
}

/**
 * Stores an answer the policy allows, with what it cost once billing priced it (0 without billing), and
 * the upstream bytes the client got when a later request of its dialect, mode and variant may replay them.
 */
export function writeFlightCache(
  deps: ChatGatewayDeps,
  flight: Flight,
  response: ChatResponse,
  meta: { provider: string; upstreamModel: string },
  usage: Usage,
  billed: Promise<FinishResult> | undefined,
  captured: CapturedBytes | undefined,
): void {
  const { policy, cacheKey } = flight;
  const cache = deps.cache?.store;
  if (!policy?.write || cacheKey === undefined || cache === undefined) return;
  if (!evaluateCachedAnswer(response, { model: flight.route.model.name, optedIn: policy.optedIn }).cacheable) return;
  void Promise.resolve(billed)
    .then(
      (r) => r?.cost?.costMicros ?? 0,
      () => 0,
    )
    .then((costMicros) => {
      const bytes = captureCachedBytes(response, captured, describeByteReplay(flight.context.passThrough, flight.request));
      return cache.store(cacheKey, { response, bytes, usage, provider: meta.provider, upstreamModel: meta.upstreamModel, costMicros });
    })
    .catch((err: unknown) => deps.log?.(`cache: ${escapeLogText(String(err))}`));
}
