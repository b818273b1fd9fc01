// Retry-After (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) and OpenAI's retry-after-ms, as seconds.

/** Seconds to wait, or undefined when absent or unparseable. Dates in the past give 0. */
export function parseRetryAfter(headers: { 'retry-after'?: string; 'retry-after-ms'?: string }, now = Date.now()): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(ms)) return Number(ms) / 1000;
  const value = headers['retry-after']?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const date = Date.parse(value);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

/** Google's RetryInfo.retryDelay (a protobuf Duration as JSON, e.g. "34.4s"), as seconds. */
export function parseDurationSeconds(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d+(?:\.\d+)?)s$/.exec(value.trim());
  return match ? Number(match[1]) : undefined;
}
