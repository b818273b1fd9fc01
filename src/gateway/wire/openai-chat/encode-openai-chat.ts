// The OpenAI chat ingress encoder: a canonical response or chunk as the JSON text an OpenAI chat client
// reads. Canonical objects are already this dialect's shape, so an OpenAI-compatible upstream's own bytes
// go out as they came (model renamed); anything else — other upstreams, cache replays — is serialised.
import type { ChatChunk, ChatResponse } from '../../protocol/chat-types.ts';
import { readUpstreamBytes } from '../../protocol/upstream-bytes.ts';

export function encodeOpenAIChatCompletion(response: ChatResponse): string {
  return readUpstreamBytes(response) ?? JSON.stringify(response);
}

/** One SSE event's data. */
export function encodeOpenAIChatChunk(chunk: ChatChunk): string {
  return readUpstreamBytes(chunk) ?? JSON.stringify(chunk);
}
