// The one mapping from Herd's errors to Anthropic's wire shape: `{"type":"error","error":{type, message}}`
// with the statuses Anthropic's API answers (529 overloaded), so the Anthropic SDKs raise their usual classes.
// Like the OpenAI mapping, the kind is the code, refined by reason or upstream failure, never by the message.
import type { ErrorCode, ErrorReason, HerdError } from '../core/errors.ts';
import { UpstreamError, type UpstreamFailure } from '../gateway/protocol/upstream-error.ts';

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
}

export interface AnthropicErrorAnswer {
  status: number;
  body: AnthropicErrorBody;
  headers: Record<string, string>;
}

/** What one kind of error looks like on the Anthropic side; `retry` adds Retry-After when the error has a wait. */
export interface AnthropicErrorShape {
  status: number;
  type: AnthropicErrorType;
  retry: boolean;
}

const shape = (status: number, type: AnthropicErrorType, retry = false): AnthropicErrorShape => ({ status, type, retry });

export const ANTHROPIC_ERROR_BY_CODE: Readonly<Record<ErrorCode, AnthropicErrorShape>> = {
  INVALID_ARG: shape(400, 'invalid_request_error'),
  UNSUPPORTED: shape(400, 'invalid_request_error'),
  ALREADY_EXISTS: shape(400, 'invalid_request_error'),
  CANCELLED: shape(400, 'invalid_request_error'),
  UNKNOWN: shape(500, 'api_error'),
  PAYLOAD_TOO_LARGE: shape(413, 'request_too_large'),
  UNAUTHENTICATED: shape(401, 'authentication_error'),
  PERMISSION_DENIED: shape(403, 'permission_error'),
  NOT_FOUND: shape(404, 'not_found_error'),
  RATE_LIMITED: shape(429, 'rate_limit_error', true),
  // Anthropic answers a spent limit as a 429 rate_limit_error without Retry-After.
  BUDGET_EXCEEDED: shape(429, 'rate_limit_error'),
  // Herd itself full (queues, every breaker open): Anthropic's word for that is overloaded.
  UNAVAILABLE: shape(529, 'overloaded_error', true),
  INTERNAL: shape(500, 'api_error'),
  UPSTREAM_RATE_LIMITED: shape(429, 'rate_limit_error', true),
  UPSTREAM_UNAVAILABLE: shape(529, 'overloaded_error', true),
  UPSTREAM_TIMEOUT: shape(504, 'timeout_error'),
  UPSTREAM_ERROR: shape(502, 'api_error'),
};

export const ANTHROPIC_ERROR_BY_REASON: Readonly<Record<ErrorReason, AnthropicErrorShape>> = {
  invalid_api_key: shape(401, 'authentication_error'),
  key_rotated: shape(401, 'authentication_error'),
  key_expired: shape(401, 'authentication_error'),
  key_revoked: shape(401, 'authentication_error'),
  key_blocked: shape(403, 'permission_error'),
  address_not_allowed: shape(403, 'permission_error'),
  model_not_allowed: shape(403, 'permission_error'),
  admin_only: shape(403, 'permission_error'),
  csrf_failed: shape(403, 'permission_error'),
  unknown_object: shape(404, 'not_found_error'),
};

export const ANTHROPIC_ERROR_BY_UPSTREAM_FAILURE: Readonly<Record<UpstreamFailure, AnthropicErrorShape>> = {
  invalid_request: shape(400, 'invalid_request_error'),
  context_length: shape(400, 'invalid_request_error'),
  content_filter: shape(400, 'invalid_request_error'),
  rate_limited: shape(429, 'rate_limit_error', true),
  quota_exceeded: shape(429, 'rate_limit_error', true),
  unavailable: shape(529, 'overloaded_error', true),
  timeout: shape(504, 'timeout_error'),
  server_error: shape(502, 'api_error'),
  interrupted: shape(502, 'api_error'),
  malformed: shape(502, 'api_error'),
  auth: shape(502, 'api_error'),
  not_found: shape(502, 'api_error'),
};

/** The shape for an error: its upstream failure, else its reason, else its code. */
export function mapErrorToAnthropicShape(error: HerdError): AnthropicErrorShape {
  if (error instanceof UpstreamError) return ANTHROPIC_ERROR_BY_UPSTREAM_FAILURE[error.failure];
  if (error.reason !== undefined) return ANTHROPIC_ERROR_BY_REASON[error.reason];
  return ANTHROPIC_ERROR_BY_CODE[error.code];
}

export function mapErrorToAnthropic(error: HerdError): AnthropicErrorAnswer {
  const { status, type, retry } = mapErrorToAnthropicShape(error);
  return {
    status,
    body: { type: 'error', error: { type, message: error.message } },
    headers: retry && error.retryAfterSeconds !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterSeconds))) } : {},
  };
}
