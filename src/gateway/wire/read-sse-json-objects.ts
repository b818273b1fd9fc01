// The JSON objects in pass-through SSE text, for the readers that turn a dialect's raw events back into
// chunks (parse-raw-stream-chunks.ts): what reached the client is read again, so what does not parse is
// skipped here, never an error.
import { isJsonObject, type JsonObject } from '../protocol/check-json-value.ts';
import { SseEventSplitter } from './split-sse-events.ts';

/**
 * Each event's data in `texts` (whole SSE events) that parses as a JSON object, in order, with `type` taken
 * from the event's name where the data has none (Anthropic names its events; the data says it too).
 */
export function* readSseJsonObjects(texts: Iterable<string>): Generator<JsonObject> {
  const splitter = new SseEventSplitter();
  for (const text of texts) {
    for (const block of splitter.feed(text)) {
      if (block.data === undefined || block.data === '[DONE]') continue;
      let value: unknown;
      try {
        value = JSON.parse(block.data);
      } catch {
        continue;
      }
      if (!isJsonObject(value)) continue;
      if (value.type === undefined && block.event !== undefined) value.type = block.event;
      yield value;
    }
  }
}
