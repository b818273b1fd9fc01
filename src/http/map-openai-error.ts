// The one mapping from Herd's errors to OpenAI's wire shape: `{"error": {message, type, param, code}}`
// with OpenAI's statuses, and Retry-After where a client should wait (rate limits, not budgets).
// The kind is the error's code, refined by its reason or, for upstream failures, by the failure: never by its message.
import type { ErrorCode, ErrorReason, HerdError } from '../core/errors.ts';
import { UpstreamError, type UpstreamFailure } from '../gateway/protocol/upstream-error.ts';

export interface OpenAIErrorAnswer {
  status: number;
  body: { error: { message: string; type: string; param: string | null; code: string | null } };
  headers: Record<string, string>;
}

/** What one kind of error looks like on the OpenAI side; `retry` adds Retry-After when the error has a wait. */
export interface OpenAIErrorShape {
  status: number;
  type: string;
  code: string | null;
  retry: boolean;
}

const shape = (status: number, type: string, code: string | null, retry = false): OpenAIErrorShape => ({ status, type, code, retry });

export const OPENAI_ERROR_BY_CODE: Readonly<Record<ErrorCode, OpenAIErrorShape>> = {
  INVALID_ARG: shape(400, 'invalid_request_error', null),
  UNSUPPORTED: shape(400, 'invalid_request_error', 'unsupported_parameter'),
  ALREADY_EXISTS: shape(400, 'invalid_request_error', null),
  CANCELLED: shape(400, 'invalid_request_error', null),
  UNKNOWN: shape(500, 'server_error', null),
  PAYLOAD_TOO_LARGE: shape(413, 'invalid_request_error', 'request_too_large'),
  UNAUTHENTICATED: shape(401, 'invalid_request_error', null),
  PERMISSION_DENIED: shape(403, 'invalid_request_error', null),
  NOT_FOUND: shape(404, 'invalid_request_error', 'model_not_found'),
  RATE_LIMITED: shape(429, 'requests', 'rate_limit_exceeded', true),
  BUDGET_EXCEEDED: shape(429, 'insufficient_quota', 'insufficient_quota'),
  UNAVAILABLE: shape(503, 'server_error', 'service_unavailable', true),
  INTERNAL: shape(500, 'server_error', null),
  UPSTREAM_RATE_LIMITED: shape(429, 'rate_limit_error', 'rate_limit_exceeded', true),
  UPSTREAM_UNAVAILABLE: shape(503, 'server_error', 'upstream_unavailable', true),
  UPSTREAM_TIMEOUT: shape(504, 'server_error', 'upstream_timeout'),
  UPSTREAM_ERROR: shape(502, 'server_error', 'upstream_error'),
};

export const OPENAI_ERROR_BY_REASON: Readonly<Record<ErrorReason, OpenAIErrorShape>> = {
  invalid_api_key: shape(401, 'invalid_request_error', 'invalid_api_key'),
  // The SDKs treat 401 invalid_api_key as "fix your key": a rotated, expired or revoked key is that case.
  key_rotated: shape(401, 'invalid_request_error', 'invalid_api_key'),
  key_expired: shape(401, 'invalid_request_error', 'invalid_api_key'),
  key_revoked: shape(401, 'invalid_request_error', 'invalid_api_key'),
  key_blocked: shape(403, 'invalid_request_error', 'insufficient_permissions'),
  address_not_allowed: shape(403, 'invalid_request_error', 'insufficient_permissions'),
  model_not_allowed: shape(403, 'invalid_request_error', 'model_not_allowed'),
  admin_only: shape(403, 'invalid_request_error', 'insufficient_permissions'),
  // The console's session cookie without its x-csrf-token (docs/console.md): the page's own words for it.
  csrf_failed: shape(403, 'permission_error', 'csrf_failed'),
  // A file or batch id the key cannot see (unknown, deleted, or another key's): OpenAI answers 404 without a code.
  unknown_object: shape(404, 'invalid_request_error', null),
};

export const OPENAI_ERROR_BY_UPSTREAM_FAILURE: Readonly<Record<UpstreamFailure, OpenAIErrorShape>> = {
  invalid_request: shape(400, 'invalid_request_error', null),
  context_length: shape(400, 'invalid_request_error', 'context_length_exceeded'),
  content_filter: shape(400, 'invalid_request_error', 'content_filter'),
  rate_limited: shape(429, 'rate_limit_error', 'rate_limit_exceeded', true),
  quota_exceeded: shape(429, 'insufficient_quota', 'upstream_quota_exceeded', true),
  unavailable: shape(503, 'server_error', 'upstream_unavailable', true),
  timeout: shape(504, 'server_error', 'upstream_timeout'),
  server_error: shape(502, 'server_error', 'upstream_error'),
  interrupted: shape(502, 'server_error', 'upstream_error'),
  malformed: shape(502, 'server_error', 'upstream_error'),
  auth: shape(502, 'server_error', 'upstream_error'),
  not_found: shape(502, 'server_error', 'upstream_error'),
};

/** The shape for an error: its upstream failure, else its reason, else its code. */
export function mapErrorToOpenAIShape(error: HerdError): OpenAIErrorShape {
  if (error instanceof UpstreamError) return OPENAI_ERROR_BY_UPSTREAM_FAILURE[error.failure];
  if (error.reason !== undefined) return OPENAI_ERROR_BY_REASON[error.reason];
  return OPENAI_ERROR_BY_CODE[error.code];
}

export function mapErrorToOpenAI(error: HerdError): OpenAIErrorAnswer {
  const { status, type, code, retry } = mapErrorToOpenAIShape(error);
  return {
    status,
    body: { error: { message: error.message, type, param: error.param ?? null, code } },
    headers: retry && error.retryAfterSeconds !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterSeconds))) } : {},
  };
}

/** The answer for a status and message Herd chose itself (routing: an unknown /v1 path or method), outside the taxonomy. */
export function createOpenAIErrorAnswer(status: number, message: string): OpenAIErrorAnswer {
  return { status, body: { error: { message, type: status < 500 ? 'invalid_request_error' : 'server_error', param: null, code: null } }, headers: {} };
}
