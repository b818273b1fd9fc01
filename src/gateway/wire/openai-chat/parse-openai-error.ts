// Reads OpenAI-dialect error bodies: {"error": {"message", "type", "param", "code"}}; relays sometimes
// send {"error": "text"} or {"message": "text"} instead.
import type { UpstreamErrorBody } from '../../protocol/upstream-error.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';

export function parseOpenAIErrorBody(body: unknown): UpstreamErrorBody {
  if (!isJsonObject(body)) return {};
  const error = body.error;
  if (typeof error === 'string') return { message: error };
  if (!isJsonObject(error)) return typeof body.message === 'string' ? { message: body.message } : {};
  const code = typeof error.code === 'string' ? error.code : undefined;
  const type = typeof error.type === 'string' ? error.type : undefined;
  const result: UpstreamErrorBody = { type: code ?? type };
  if (typeof error.message === 'string') result.message = error.message;
  if (code === 'context_length_exceeded') result.failure = 'context_length';
  if (code === 'insufficient_quota' || type === 'insufficient_quota') result.failure = 'quota_exceeded';
  return result;
}
