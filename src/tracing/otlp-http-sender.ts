// POSTs one encoded batch to the OTLP/HTTP traces endpoint and says whether a failure is worth retrying,
// as the OTLP specification lists: 429, 502, 503, 504 and network failures, with the collector's Retry-After.
import { Agent } from 'undici';

export type SendResult = { ok: true } | { ok: false; retryable: boolean; retryAfterMs: number | undefined; reason: string };

export interface OtlpHttpSender {
  send(body: Uint8Array, signal?: AbortSignal): Promise<SendResult>;
  close(): Promise<void>;
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

export function createOtlpHttpSender(options: { url: string; headers: Readonly<Record<string, string>>; timeoutMs: number }): OtlpHttpSender {
  // Its own small pool: a slow collector never holds a socket an upstream request needs.
  const agent = new Agent({ connections: 2, headersTimeout: options.timeoutMs, bodyTimeout: options.timeoutMs, keepAliveTimeout: 10_000 });
  const headers = { ...options.headers, 'content-type': 'application/x-protobuf' };
  return {
    async send(body, signal) {
      const timeout = AbortSignal.timeout(options.timeoutMs);
      try {
        const res = await agent.request({
          origin: new URL(options.url).origin,
          path: pathOf(options.url),
          method: 'POST',
          headers,
          body,
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
        await res.body.dump();
        if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true };
        return { ok: false, retryable: RETRYABLE_STATUS.has(res.statusCode), retryAfterMs: parseRetryAfter(res.headers['retry-after']), reason: `HTTP ${res.statusCode}` };
      } catch (err) {
        return { ok: false, retryable: signal?.aborted !== true, retryAfterMs: undefined, reason: err instanceof Error ? err.message : String(err) };
      }
    },
    close: () => agent.close(),
  };
}

function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/** Seconds or an HTTP date, as OTLP allows; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
