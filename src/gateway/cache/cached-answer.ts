// What one cache entry holds — the answer as the client first got it plus what billing and the
// x-herd-* headers need on a hit — and its JSON form, identical in memory and in Redis.
import type { ChatResponse, Usage } from '../protocol/chat-types.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import type { ByteMode } from './describe-byte-replay.ts';

/** 2: `bytes` became CachedBytes (dialect, mode, variant; streams too), was the OpenAI chat JSON text. */
export const CACHED_ANSWER_VERSION = 2;

/**
 * An upstream's own bytes as a pass-through client first got them, and what a later request must share
 * to get them too (describeByteReplay); any other hit gets the canonical replay of `response`.
 */
export type CachedBytes = CachedJsonBytes | CachedStreamBytes;

interface CachedBytesBase {
  dialect: IngressDialect;
  mode: ByteMode;
  variant: string;
  /** The answer's id as the texts write it (a JSON string there), replaced by a fresh one on every hit. */
  id: string;
  /** The answer's `created` / `created_at` as the texts write it, replaced on every hit; absent when they have none. */
  created?: number;
}

export interface CachedJsonBytes extends CachedBytesBase {
  mode: 'json';
  text: string;
}

export interface CachedStreamBytes extends CachedBytesBase {
  mode: 'stream';
  /** The SSE text the client got, in the pieces it was written in; the transport's own ending (OpenAI's [DONE]) not included. */
  events: string[];
}

export interface CachedAnswer {
  v: typeof CACHED_ANSWER_VERSION;
  /** The body first sent (its original id and created; `model` is the public model name). */
  response: ChatResponse;
  /** Normalised usage of the original call. */
  usage: Usage;
  /** The upstream's own bytes when the client got them (fields Herd does not model included). */
  bytes?: CachedBytes;
  /** Public name of the model that answered (equal to the canonical model in the key). */
  model: string;
  provider: string;
  upstreamModel: string;
  /** What the original call cost, in billing's micro-units; opaque here, summed as "saved" on hits. */
  costMicros: number;
  /** Epoch ms when stored. */
  storedAt: number;
  /** Epoch ms after which no tier serves it (storedAt + the writer's longest TTL). */
  expiresAt: number;
}

export interface CachedAnswerInput {
  response: ChatResponse;
  bytes?: CachedBytes | undefined;
  usage: Usage;
  provider: string;
  upstreamModel: string;
  costMicros: number;
}

/** A stored entry: frozen (the memory tier hands out the same object to every hit) and its JSON. */
export interface EncodedAnswer {
  answer: Readonly<CachedAnswer>;
  json: string;
  bytes: number;
}

export function encodeCachedAnswer(input: CachedAnswerInput, storedAt: number, ttlMs: number): EncodedAnswer {
  const answer: CachedAnswer = {
    v: CACHED_ANSWER_VERSION,
    response: input.response,
    usage: input.usage,
    model: input.response.model,
    provider: input.provider,
    upstreamModel: input.upstreamModel,
    costMicros: input.costMicros,
    storedAt,
    expiresAt: storedAt + ttlMs,
  };
  if (input.bytes !== undefined) answer.bytes = input.bytes;
  const json = JSON.stringify(answer);
  // Parsed back rather than frozen in place: the caller still owns (and may change) the live response.
  return { answer: deepFreeze(JSON.parse(json) as CachedAnswer), json, bytes: Buffer.byteLength(json) };
}

/**
 * An entry another Herd version wrote (its `v` differs): a plain miss, not a Redis fault, so a rolling
 * upgrade neither logs an outage nor counts errors. (Versions live under separate Redis keys, see
 * ResponseCache; this covers anything written there regardless.)
 */
export class OtherVersionEntry extends Error {}

/** Redis holds text another Herd version (or anything else) may have written: check before trusting it. */
export function decodeCachedAnswer(json: string): EncodedAnswer | OtherVersionEntry | Error {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return new Error(`cache entry is not JSON: ${(err as Error).message}`);
  }
  if (isObject(value) && typeof value.v === 'number' && value.v !== CACHED_ANSWER_VERSION) {
    return new OtherVersionEntry(`cache entry of version ${value.v}, expected ${CACHED_ANSWER_VERSION}`);
  }
  const problem = describeShapeProblem(value);
  if (problem !== undefined) return new Error(`cache entry rejected: ${problem}`);
  return { answer: deepFreeze(value as CachedAnswer), json, bytes: Buffer.byteLength(json) };
}

function describeShapeProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'not an object';
  if (value.v !== CACHED_ANSWER_VERSION) return `version ${JSON.stringify(value.v)}, expected ${CACHED_ANSWER_VERSION}`;
  for (const field of ['model', 'provider', 'upstreamModel'] as const) {
    if (typeof value[field] !== 'string') return `${field} is not a string`;
  }
  for (const field of ['costMicros', 'storedAt', 'expiresAt'] as const) {
    if (typeof value[field] !== 'number') return `${field} is not a number`;
  }
  if (!isObject(value.usage) || typeof value.usage.promptTokens !== 'number') return 'usage is malformed';
  if (value.bytes !== undefined) {
    const problem = describeBytesProblem(value.bytes);
    if (problem !== undefined) return `bytes: ${problem}`;
  }
  const response = value.response;
  if (!isObject(response) || response.object !== 'chat.completion' || !Array.isArray(response.choices)) return 'response is not a chat.completion';
  if (!response.choices.every((c) => isObject(c) && isObject(c.message) && typeof c.index === 'number')) return 'a choice is malformed';
  return undefined;
}

function describeBytesProblem(bytes: unknown): string | undefined {
  if (!isObject(bytes)) return 'not an object';
  for (const field of ['dialect', 'variant', 'id'] as const) {
    if (typeof bytes[field] !== 'string') return `${field} is not a string`;
  }
  if (bytes.created !== undefined && typeof bytes.created !== 'number') return 'created is not a number';
  if (bytes.mode === 'json') return typeof bytes.text === 'string' ? undefined : 'text is not a string';
  if (bytes.mode === 'stream') return Array.isArray(bytes.events) && bytes.events.every((e) => typeof e === 'string') ? undefined : 'events are not strings';
  return `mode ${JSON.stringify(bytes.mode)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
