// The body an OpenAI-compatible upstream gets on same-dialect pass-through (chat, Responses, completions): the
// client's own, its keys in the client's order, only `model` replaced and, on chat and completions streams,
// stream_options.include_usage forced on (Herd bills from the usage chunk; the client sees it only if it asked).
import { isJsonObject, type JsonObject } from '../../protocol/check-json-value.ts';

export function createPassThroughBody(body: Readonly<JsonObject>, model: string, forceUsage: boolean): JsonObject {
  // Spread copies, which keep a `__proto__` member as a member (Object.assign would set the prototype). A spread
  // copy that gains a member afterwards serialises slowly, so a stream_options the client did not send is
  // declared before the spread (docs/decisions/hot-path-allocation-shapes.md); `model` is already a member.
  const out: JsonObject = forceUsage ? { stream_options: undefined, ...body } : { ...body };
  out.model = model;
  if (forceUsage) {
    const options = isJsonObject(body.stream_options) ? body.stream_options : undefined;
    if (options?.include_usage !== true) out.stream_options = options === undefined ? { include_usage: true } : { ...options, include_usage: true };
  }
  return out;
}
