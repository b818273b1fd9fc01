// Server answers and transport failures to HerdError, keeping the server's own message: KServe
// servers answer `{"error": "..."}`, and that text is what a user needs to see.
import { HerdError, type ErrorCode } from '../core/errors.ts';

/** Triton's HTTP statuses back to the taxonomy (400 covers both bad arguments and unknown models). */
export function mapHttpStatusToErrorCode(status: number): ErrorCode {
  switch (status) {
    case 400:
      return 'INVALID_ARG';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 429:
      return 'RATE_LIMITED';
    case 501:
      return 'UNSUPPORTED';
    case 502:
    case 503:
    case 504:
      return 'UNAVAILABLE';
    default:
      return 'INTERNAL';
  }
}

/** A non-2xx answer as a HerdError carrying the server's `error` text (or the raw body when it has none). */
export function createHttpError(status: number, body: Uint8Array, what: string): HerdError {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8').trim();
  let message = text;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed) {
      const error = (parsed as { error: unknown }).error;
      if (typeof error === 'string') message = error;
      // OpenAI-shaped answers nest the text.
      else if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
        message = (error as { message: string }).message;
      }
    }
  } catch {
    // Not JSON: keep the text as it came.
  }
  if (message === '') message = `${what} failed with HTTP ${status}`;
  return new HerdError(mapHttpStatusToErrorCode(status), message);
}

/** A connection-level failure (refused, reset, timed out) as UNAVAILABLE naming the server. */
export function createTransportError(err: unknown, origin: string): HerdError {
  if (err instanceof HerdError) return err;
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  const detail = describeTransportError(err, code);
  return new HerdError('UNAVAILABLE', `cannot reach the server at ${origin}: ${detail}`, { cause: err });
}

function describeTransportError(err: unknown, code: unknown): string {
  // undici may wrap the socket error; the innermost one names what actually happened.
  const inner = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  // "localhost" tried on ::1 and 127.0.0.1 fails as an AggregateError with an empty message.
  if (inner instanceof AggregateError && inner.message === '') {
    const parts = inner.errors.map((e: unknown) => (e instanceof Error ? e.message : String(e))).filter((m) => m !== '');
    if (parts.length > 0) return parts.join('; ');
  }
  const message = inner instanceof Error ? inner.message : String(inner);
  if (message !== '') return message;
  return typeof code === 'string' ? code : 'connection failed';
}
