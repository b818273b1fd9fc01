// The one mapping from Herd's error taxonomy to KServe HTTP answers: `{"error": "..."}` with Triton's
// status codes (server src/http_server.cc HttpCodeFromError: INVALID_ARG 400, NOT_FOUND 404,
// UNAVAILABLE 503, UNSUPPORTED 501, ALREADY_EXISTS, CANCELLED and UNKNOWN 400, INTERNAL 500). Every KServe-shaped error answer, on :8000 and
// :8002, is built here, and here alone decides which ones are logged.
import { type ErrorCode, toHerdError } from '../core/errors.ts';
import { escapeLogText, formatErrorForLog } from '../core/escape-log-text.ts';

const STATUS: Readonly<Record<ErrorCode, number>> = {
  INVALID_ARG: 400,
  NOT_FOUND: 404,
  // Triton has no such code: an oversized body is an invalid argument there (400).
  PAYLOAD_TOO_LARGE: 400,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
  ALREADY_EXISTS: 400,
  CANCELLED: 400,
  UNKNOWN: 400,
  INTERNAL: 500,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  RATE_LIMITED: 429,
  BUDGET_EXCEEDED: 429,
  UPSTREAM_ERROR: 502,
  UPSTREAM_TIMEOUT: 504,
  UPSTREAM_UNAVAILABLE: 503,
  UPSTREAM_RATE_LIMITED: 429,
};

/** One error answer: the status, the JSON body, and the line to log when the failure is the server's. */
export interface KserveErrorAnswer {
  status: number;
  body: string;
  /** Set for failures an operator should see (Herd's own faults and upstream failures), with the stack. */
  logLine: string | undefined;
}

/** The answer for a status and message Herd chose itself (routing, HTTP parsing), outside the taxonomy. */
export function createKserveErrorAnswer(status: number, message: string, cause?: unknown): KserveErrorAnswer {
  // 501 and 503 are expected refusals (not implemented, overloaded, unloading): the client is told, the log stays quiet.
  const logged = status >= 500 && status !== 501 && status !== 503;
  // Herd's own faults keep their stack; the message (which may quote client text) is escaped either way.
  const detail = cause instanceof Error ? formatErrorForLog(cause) : escapeLogText(message);
  return { status, body: JSON.stringify({ error: message }), logLine: logged ? `internal error: ${detail}` : undefined };
}

/** The answer for anything thrown: a HerdError keeps its code, anything else is INTERNAL. */
export function mapErrorToKserve(err: unknown): KserveErrorAnswer {
  const error = toHerdError(err);
  return createKserveErrorAnswer(STATUS[error.code], error.message, err);
}
