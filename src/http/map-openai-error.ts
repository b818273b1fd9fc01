// The one mapping from Herd's errors to OpenAI's wire shape: `{"error": {message, type, param, code}}`
// with OpenAI's statuses, and Retry-After where a client should wait (rate limits, not budgets).
import type { HerdError } from '../core/errors.ts';
import { UpstreamError } from '../gateway/providers/upstream-error.ts';

export interface OpenAIErrorAnswer {
  status: number;
  body: { error: { message: string; type: string; param: string | null; code: string | null } };
  headers: Record<string, string>;
}

export function mapErrorToOpenAI(error: HerdError): OpenAIErrorAnswer {
  const answer = (status: number, type: string, code: string | null, retry = false): OpenAIErrorAnswer => ({
    status,
    body: { error: { message: error.message, type, param: error.param ?? null, code } },
    headers: retry && error.retryAfterSeconds !== undefined ? { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterSeconds))) } : {},
  });
  if (error instanceof UpstreamError) {
    switch (error.failure) {
      case 'invalid_request': return answer(400, 'invalid_request_error', null);
      case 'context_length': return answer(400, 'invalid_request_error', 'context_length_exceeded');
      case 'content_filter': return answer(400, 'invalid_request_error', 'content_filter');
      case 'rate_limited': return answer(429, 'rate_limit_error', 'rate_limit_exceeded', true);
      case 'quota_exceeded': return answer(429, 'insufficient_quota', 'upstream_quota_exceeded', true);
      case 'unavailable': return answer(503, 'server_error', 'upstream_unavailable', true);
      case 'timeout': return answer(504, 'server_error', 'upstream_timeout');
      default: return answer(502, 'server_error', 'upstream_error');
    }
  }
  switch (error.code) {
    case 'INVALID_ARG': return answer(400, 'invalid_request_error', null);
    case 'UNSUPPORTED': return answer(400, 'invalid_request_error', 'unsupported_parameter');
    case 'PAYLOAD_TOO_LARGE': return answer(413, 'invalid_request_error', 'request_too_large');
    case 'UNAUTHENTICATED': return answer(401, 'invalid_request_error', error.message.startsWith('Incorrect API key') ? 'invalid_api_key' : null);
    case 'PERMISSION_DENIED': return answer(403, 'invalid_request_error', 'model_not_allowed');
    case 'NOT_FOUND': return answer(404, 'invalid_request_error', 'model_not_found');
    case 'RATE_LIMITED': return answer(429, 'requests', 'rate_limit_exceeded', true);
    case 'BUDGET_EXCEEDED': return answer(429, 'insufficient_quota', 'insufficient_quota');
    case 'UNAVAILABLE': return answer(503, 'server_error', 'service_unavailable', true);
    case 'UPSTREAM_RATE_LIMITED': return answer(429, 'rate_limit_error', 'rate_limit_exceeded', true);
    case 'UPSTREAM_UNAVAILABLE': return answer(503, 'server_error', 'upstream_unavailable', true);
    case 'UPSTREAM_TIMEOUT': return answer(504, 'server_error', 'upstream_timeout');
    case 'UPSTREAM_ERROR': return answer(502, 'server_error', 'upstream_error');
    default: return answer(500, 'server_error', null);
  }
}
