// Google API error bodies: {"error": {"code", "message", "status", "details": [...]}}, where a 429 may
// carry google.rpc.RetryInfo.retryDelay ("34.4s") instead of a Retry-After header, and a 400 an ErrorInfo
// reason that says it is the key (API_KEY_INVALID), not the request.
import type { UpstreamErrorBody } from '../../protocol/upstream-error.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';
import { parseDurationSeconds } from '../parse-retry-after.ts';

/** ErrorInfo reasons Google sends with 400 INVALID_ARGUMENT when the key, not the request, is wrong. */
const AUTH_REASONS = new Set(['API_KEY_INVALID', 'API_KEY_EXPIRED', 'API_KEY_SERVICE_BLOCKED']);

const CONTEXT_LENGTH = /token count.*exceeds|exceeds the maximum number of tokens|context (window|length)/i;

export function parseGeminiErrorBody(body: unknown): UpstreamErrorBody {
  // streamGenerateContent without alt=sse wraps the error in an array; accept both.
  const root = Array.isArray(body) ? body[0] : body;
  const error = isJsonObject(root) && isJsonObject(root.error) ? root.error : undefined;
  if (error === undefined) return {};
  const result: UpstreamErrorBody = {};
  if (typeof error.status === 'string') result.type = error.status;
  if (typeof error.message === 'string') result.message = error.message;
  if (result.type === 'INVALID_ARGUMENT' && result.message !== undefined && CONTEXT_LENGTH.test(result.message)) {
    result.failure = 'context_length';
  }
  for (const detail of Array.isArray(error.details) ? error.details : []) {
    if (isJsonObject(detail) && detail['@type'] === 'type.googleapis.com/google.rpc.RetryInfo') {
      result.retryAfterSeconds = parseDurationSeconds(detail.retryDelay);
    } else if (isJsonObject(detail) && detail['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo' && typeof detail.reason === 'string' && AUTH_REASONS.has(detail.reason)) {
      result.failure = 'auth';
    }
  }
  return result;
}
