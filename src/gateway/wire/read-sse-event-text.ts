// Reading one SSE event's data as text, for the pass-through readers (OpenAI chat, Responses, Anthropic):
// the few fields they need found without parsing the event, and a parse only for the events that carry
// usage or an error.
import { isJsonObject, type JsonObject } from '../protocol/check-json-value.ts';
import { findJsonValue } from '../protocol/upstream-bytes.ts';

/** Whether the data is framed as a JSON object (first and last non-space characters are braces). */
export function looksLikeObject(data: string): boolean {
  let start = 0;
  let end = data.length - 1;
  while (start <= end && isSpace(data.charCodeAt(start))) start++;
  while (end >= start && isSpace(data.charCodeAt(end))) end--;
  return data.charCodeAt(start) === 123 /* { */ && data.charCodeAt(end) === 125 /* } */;
}

/** The data as a JSON object; undefined when it does not parse as one. */
export function parseJsonObject(data: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(data);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

const startsObject = (text: string, at: number) => text.charCodeAt(at) === 123; /* { */
const startsString = (text: string, at: number) => text.charCodeAt(at) === 34; /* " */

/** Whether `"key"` has an object value somewhere in the event (see findJsonValue). */
export function hasObjectField(data: string, key: string): boolean {
  return findJsonValue(data, key, startsObject) >= 0;
}

/**
 * The first string value of `"key"`, not unescaped: the fields read this way (event types, finish and
 * stop reasons, model ids) have no escapes, and one that does is treated as absent.
 */
export function readStringField(data: string, key: string): string | undefined {
  const at = findJsonValue(data, key, startsString);
  if (at < 0) return undefined;
  const end = data.indexOf('"', at + 1);
  if (end < 0) return undefined;
  const value = data.slice(at + 1, end);
  return value.includes('\\') ? undefined : value;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}
