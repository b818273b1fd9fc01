// The body an OpenAI-compatible upstream gets on same-dialect pass-through (chat, Responses, completions): the
// client's own, its keys in the client's order, only `model` replaced and, on chat and completions streams,
// stream_options.include_usage forced on (Herd bills from the usage chunk; the client sees it only if it asked).
import { isJsonObject, type JsonObject } from '../../check-json-value.ts';

export function createPassThroughBody(body: Readonly<JsonObject>, model: string, forceUsage: boolean): JsonObject {
  // A copy made by Object.assign and then set, not `{ ...body, model }`: a spread copy that gains a member
  // afterwards serialises slowly (docs/decisions/hot-path-allocation-shapes.md).
  const out: JsonObject = Object.assign({}, body);
  out.model = model;
  if (forceUsage) {
    const options = isJsonObject(body.stream_options) ? body.stream_options : undefined;
    if (options?.include_usage !== true) out.stream_options = options === undefined ? { include_usage: true } : Object.assign({}, options, { include_usage: true });
  }
  return out;
}
