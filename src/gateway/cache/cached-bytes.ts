// The two ends of byte replay: which upstream bytes a miss may store beside its answer (captureCachedBytes),
// and whether a hit may have them back (selectCachedBytes) — same dialect, mode and variant — with a fresh
// identity written into them (rewriteCachedTexts).
import type { ChatResponse } from '../protocol/chat-types.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { CachedAnswer, CachedBytes } from './cached-answer.ts';
import type { ByteReplayTarget } from './describe-byte-replay.ts';
import { type AnswerIdentity, containsCreated, containsJsonString, rewriteAnswerIdentity } from './rewrite-answer-identity.ts';

/** The upstream's text the client got: one JSON body, or the SSE pieces of a stream. */
export type CapturedBytes = { dialect: IngressDialect; text: string } | { dialect: IngressDialect; events: string[] };

/**
 * The bytes to store with `response`, or undefined (the entry then replays canonically): they must be in
 * the writer's own pass-through dialect and mode (so `target.variant` describes them), and carry the
 * answer's id — bytes whose id Herd cannot find could not be given a fresh one, and two requests must
 * never share an id.
 */
export function captureCachedBytes(response: Readonly<ChatResponse>, captured: CapturedBytes | undefined, target: ByteReplayTarget | undefined): CachedBytes | undefined {
  if (captured === undefined || target === undefined || captured.dialect !== target.dialect) return undefined;
  // Typed as a string, but an upstream that sends no id leaves none (a cache hit then gets a canonical one).
  if (typeof response.id !== 'string' || response.id === '') return undefined;
  const base = { dialect: target.dialect, variant: target.variant, id: response.id };
  if ('text' in captured) {
    if (target.mode !== 'json' || !containsJsonString(captured.text, response.id)) return undefined;
    return withCreated({ ...base, mode: 'json', text: captured.text }, [captured.text], response.created);
  }
  if (target.mode !== 'stream' || !captured.events.some((text) => containsJsonString(text, response.id))) return undefined;
  return withCreated({ ...base, mode: 'stream', events: captured.events }, captured.events, response.created);
}

function withCreated(bytes: CachedBytes, texts: readonly string[], created: number): CachedBytes {
  // A dialect that writes no creation time (Anthropic Messages) keeps none to replace.
  if (typeof created === 'number' && texts.some((text) => containsCreated(text, created))) bytes.created = created;
  return bytes;
}

/** The stored bytes this hit may replay, or undefined: it gets the canonical replay. */
export function selectCachedBytes(answer: Readonly<CachedAnswer>, target: ByteReplayTarget | undefined): Readonly<CachedBytes> | undefined {
  const bytes = answer.bytes;
  if (bytes === undefined || target === undefined) return undefined;
  return bytes.dialect === target.dialect && bytes.mode === target.mode && bytes.variant === target.variant ? bytes : undefined;
}

/** `texts` with the stored answer's id and created replaced by `fresh` everywhere, nothing else changed. */
export function rewriteCachedTexts(bytes: Readonly<CachedBytes>, texts: readonly string[], fresh: AnswerIdentity): string[] {
  const from: AnswerIdentity = bytes.created === undefined ? { id: bytes.id } : { id: bytes.id, created: bytes.created };
  return texts.map((text) => rewriteAnswerIdentity(text, from, fresh));
}
