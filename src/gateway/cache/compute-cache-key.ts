// The exact-match cache key: SHA-256 (hex) of a canonical JSON of the fields that change the answer
// (see cache-key-fields.ts), so equal requests written differently share an entry.
import { createHash } from 'node:crypto';
import type { ChatRequest } from '../protocol/chat-types.ts';
import { CACHE_KEY_FIELDS } from './cache-key-fields.ts';

/** Bumped whenever the canonical form changes, so old entries (in Redis) are never read with new meaning. */
export const CACHE_KEY_VERSION = 1;

export interface CacheKeyInput {
  request: ChatRequest;
  /** The canonical model name the request resolves to (after alias, tier or `auto`). */
  model: string;
  /**
   * Whose entry this is: the flow passes the caller's key (cache.scope `key`, the default), so a tenant's
   * entries are ones no one else can hit or probe; absent (scope `shared`): every key shares them.
   */
  partition?: string;
  /**
   * Keeps apart requests whose canonical form is equal but whose meaning is not: a legacy completions
   * prompt is a text to continue (and passes through to /completions as one), not a user turn.
   */
  space?: string;
}

export function computeCacheKey(input: CacheKeyInput): string {
  return createHash('sha256').update(canonicalizeCacheRequest(input)).digest('hex');
}

/** The canonical JSON that is hashed (exposed for tests and debugging). */
export function canonicalizeCacheRequest(input: CacheKeyInput): string {
  const fields: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(CACHE_KEY_FIELDS)) {
    if (rule.role === 'key') fields[name] = rule.canonical(input.request, { model: input.model });
  }
  return stringifyCanonical({ v: CACHE_KEY_VERSION, partition: input.partition, space: input.space, fields });
}

/**
 * JSON with object keys sorted and undefined members dropped. Client JSON whose order matters
 * arrives here already as strings (see opaqueJson), so sorting never reorders a schema.
 */
export function stringifyCanonical(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError(`cannot canonicalize ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? 'null' : stringifyCanonical(item))).join(',')}]`;
  }
  const object = value as Record<string, unknown>;
  const members: string[] = [];
  for (const key of Object.keys(object).sort()) {
    const item = object[key];
    if (item !== undefined) members.push(`${JSON.stringify(key)}:${stringifyCanonical(item)}`);
  }
  return `{${members.join(',')}}`;
}
