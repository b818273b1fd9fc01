// The x-herd-* headers of a gateway answer (who answered, how many attempts, Herd's own time, what a
// bridge dropped) and of an error (the attempts made before it).
import type { HerdError } from '../core/errors.ts';
import { NO_PROVIDER } from '../gateway/flow/gateway-observer.ts';
import { UpstreamRouteError } from '../gateway/router/attempt-record.ts';
import type { ChatMeta } from '../gateway/router/chat-meta.ts';

export type OutHeaders = Record<string, string | number>;

export function herdHeaders(meta: ChatMeta, started: number): OutHeaders {
  const elapsed = performance.now() - started;
  const headers: OutHeaders = {
    'x-herd-model': meta.model,
    'x-herd-provider': meta.provider,
    'x-herd-attempts': String(meta.attempts.length),
    'x-herd-overhead-ms': Math.max(0, elapsed - meta.upstreamMs - meta.waitedMs).toFixed(3),
    'x-herd-route': headerSafe(meta.routeRule),
  };
  if (meta.warnings.length > 0) headers['x-herd-dropped'] = describeDropped(meta.warnings);
  if (meta.maxTokensCapped !== undefined) headers['x-herd-max-tokens-capped'] = String(meta.maxTokensCapped);
  return headers;
}

/** x-herd-dropped: each setting the answering attempt left out, once, in the order met (names only; the why is in docs/gateway.md). */
function describeDropped(warnings: ChatMeta['warnings']): string {
  return [...new Set(warnings.map((w) => headerSafe(w.param)))].join(',');
}

/** A client's own member names can hold any character: what a header cannot carry (and the list's comma) is percent-encoded. */
function headerSafe(param: string): string {
  return param.replace(/[^\x21-\x2b\x2d-\x7e]/gu, (c) => encodeURIComponent(/[\ud800-\udfff]/u.test(c) ? '\ufffd' : c));
}

/**
 * The same x-herd-* headers on an error: the attempts made (0 when refused before any upstream), the model
 * and provider of the last one (provider `none` when there was none), and Herd's own time around them.
 */
export function herdErrorHeaders(error: HerdError, started: number): OutHeaders {
  const attempts = error instanceof UpstreamRouteError ? error.attempts : [];
  const last = attempts.at(-1);
  let upstreamMs = 0;
  for (const a of attempts) upstreamMs += a.durationMs + (a.waitMs ?? 0);
  const headers: OutHeaders = {
    'x-herd-provider': last?.provider ?? NO_PROVIDER,
    'x-herd-attempts': String(attempts.length),
    'x-herd-overhead-ms': Math.max(0, performance.now() - started - upstreamMs).toFixed(3),
  };
  if (last) headers['x-herd-model'] = last.model;
  return headers;
}
