// An answer's identity (its id and creation time) found and replaced inside stored upstream bytes, in any
// dialect: a cache hit replays those bytes, and two requests must never be answered under one id.
//
// Dialect-blind on purpose: the id is replaced wherever it appears as a whole JSON string (a stream
// repeats it in every event; Responses events also name it as `response_id`), the time wherever
// `"created"` or `"created_at"` holds exactly that number. Inside a JSON string every quote is escaped,
// so text an answer merely contains cannot match.
import { randomBytes } from 'node:crypto';
import { createCompletionId } from '../wire/create-ids.ts';

export interface AnswerIdentity {
  id: string;
  /** Unix seconds; absent for a dialect whose bytes carry no creation time (Anthropic Messages). */
  created?: number;
}

/** The keys that name an answer's creation time in the dialects Herd speaks. */
const CREATED_KEYS = ['created', 'created_at'] as const;

/** Whether `id` occurs in `text` as a whole JSON string (the check before bytes are kept for replay). */
export function containsJsonString(text: string, value: string): boolean {
  return indexOfJsonString(text, JSON.stringify(value), 0) >= 0;
}

/** Whether `"created"` / `"created_at"` holds exactly `created` somewhere in `text`. */
export function containsCreated(text: string, created: number): boolean {
  const old = String(created);
  return CREATED_KEYS.some((key) => indexOfCreated(text, key, old, 0) >= 0);
}

/** `text` with every occurrence of `from`'s id and created replaced by `to`'s. */
export function rewriteAnswerIdentity(text: string, from: AnswerIdentity, to: AnswerIdentity): string {
  let out = replaceJsonString(text, JSON.stringify(from.id), JSON.stringify(to.id));
  if (from.created !== undefined && to.created !== undefined && from.created !== to.created) {
    for (const key of CREATED_KEYS) out = replaceCreated(out, key, String(from.created), String(to.created));
  }
  return out;
}

/**
 * A fresh id shaped like `old` (its prefix kept: `chatcmpl-`, `msg_`, `resp_`, `cmpl-`), so a client that
 * reads the prefix sees the same kind of object; one without a recognisable prefix gets a chat completion id.
 */
export function createIdLike(old: string): string {
  const prefix = /^[A-Za-z]+[-_]/.exec(old)?.[0];
  return prefix === undefined ? createCompletionId() : `${prefix}${randomBytes(12).toString('hex')}`;
}

function replaceJsonString(text: string, old: string, next: string): string {
  let at = indexOfJsonString(text, old, 0);
  if (at < 0) return text;
  let out = '';
  let from = 0;
  while (at >= 0) {
    out += text.slice(from, at) + next;
    from = at + old.length;
    at = indexOfJsonString(text, old, from);
  }
  return out + text.slice(from);
}

/** Index of `quoted` (a JSON string literal) where its opening quote is a real one, not an escaped quote. */
function indexOfJsonString(text: string, quoted: string, from: number): number {
  for (let at = text.indexOf(quoted, from); at >= 0; at = text.indexOf(quoted, at + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 92 /* \ */) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

function replaceCreated(text: string, key: string, old: string, next: string): string {
  let out = '';
  let from = 0;
  for (let at = indexOfCreated(text, key, old, 0); at >= 0; at = indexOfCreated(text, key, old, from)) {
    out += text.slice(from, at) + next;
    from = at + old.length;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** Index of the value `old` of a `"key"<ws>:<ws>` at or after `from`, or -1 (findJsonValue, resumable). */
function indexOfCreated(text: string, key: string, old: string, from: number): number {
  const name = `"${key}"`;
  for (let at = text.indexOf(name, from); at >= 0; at = text.indexOf(name, at + name.length)) {
    let i = at + name.length;
    while (isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) !== 58 /* : */) continue;
    i++;
    while (isSpace(text.charCodeAt(i))) i++;
    if (isNumberAt(text, i, old)) return i;
  }
  return -1;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}

/** `old` is the whole number at `at` (created 17 must not match 170 or 17.5). */
function isNumberAt(text: string, at: number, old: string): boolean {
  if (!text.startsWith(old, at)) return false;
  const after = text.charCodeAt(at + old.length);
  return !(after >= 48 && after <= 57) && after !== 46 && after !== 101 && after !== 69;
}
