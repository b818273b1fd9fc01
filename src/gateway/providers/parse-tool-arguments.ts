// Tool-call arguments travel as a JSON string in OpenAI's format; Anthropic and Gemini want the object.
import { HerdError } from '../../core/errors.ts';
import { isJsonObject } from '../protocol/check-json-value.ts';

/** The arguments object; an empty string (some clients send it for no-argument calls) is {}. */
export function parseToolArguments(text: string, param: string): Record<string, unknown> {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HerdError('INVALID_ARG', `Invalid '${param}': not valid JSON`, { param });
  }
  if (!isJsonObject(value)) throw new HerdError('INVALID_ARG', `Invalid '${param}': expected a JSON object`, { param });
  return value;
}
