// Anthropic's error bodies ({"type":"error","error":{"type","message"}}), both as HTTP error bodies and
// as the `error` event of a stream, mapped to Herd's upstream failure kinds.
import { isJsonObject } from '../../protocol/check-json-value.ts';
import { UpstreamError, type UpstreamFailure, type UpstreamErrorBody } from '../../protocol/upstream-error.ts';

// Error types from Anthropic's "Errors" page; overloaded_error is HTTP 529.
const FAILURE_BY_TYPE: Record<string, UpstreamFailure> = {
  invalid_request_error: 'invalid_request',
  authentication_error: 'auth',
  permission_error: 'auth',
  billing_error: 'quota_exceeded',
  not_found_error: 'not_found',
  request_too_large: 'invalid_request',
  rate_limit_error: 'rate_limited',
  api_error: 'server_error',
  timeout_error: 'timeout',
  overloaded_error: 'unavailable',
};

const CONTEXT_LENGTH = /prompt is too long|context (window|length)|too many (input )?tokens/i;

/** Type and message out of an error body; `failure` only where the body says more than the status. */
export function parseAnthropicErrorBody(body: unknown): UpstreamErrorBody {
  const error = isJsonObject(body) && isJsonObject(body.error) ? body.error : undefined;
  if (error === undefined) return {};
  const type = typeof error.type === 'string' ? error.type : undefined;
  const message = typeof error.message === 'string' ? error.message : undefined;
  const result: UpstreamErrorBody = { type, message };
  if (type === 'invalid_request_error' && message !== undefined && CONTEXT_LENGTH.test(message)) result.failure = 'context_length';
  if (type === 'billing_error') result.failure = 'quota_exceeded';
  return result;
}

/** For a stream's `error` event, where there is no HTTP status to go by. */
export function mapAnthropicErrorType(details: UpstreamErrorBody): UpstreamFailure {
  return details.failure ?? (details.type !== undefined ? FAILURE_BY_TYPE[details.type] : undefined) ?? 'server_error';
}

/** An `error` event of a stream (translated or passed through) as the UpstreamError the retry loop reads. */
export function convertAnthropicStreamError(provider: string, event: unknown, sanitize: (text: string) => string): UpstreamError {
  const details = parseAnthropicErrorBody(event);
  const type = sanitize(details.type ?? 'error');
  const message = sanitize(details.message ?? 'no message');
  return new UpstreamError(`${provider}: upstream stream error ${type}: ${message}`, { provider, failure: mapAnthropicErrorType(details), upstreamType: details.type });
}
