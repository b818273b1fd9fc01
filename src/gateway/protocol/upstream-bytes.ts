// The exact JSON text an upstream sent for a canonical response or chunk, tagged with the upstream's
// dialect and kept beside the parsed object, so a client of that same dialect gets the upstream's bytes
// (fields Herd does not model included) instead of a re-serialisation. Clients of another dialect read
// the canonical object and never see them.
//
// A side table rather than a property: a property would be serialised, copied by spreads and seen by
// every dialect's encoder. Code that changes a canonical object carrying bytes must change the bytes
// the same way (renameModel) or drop them (the encoder then serialises the object).
import type { IngressDialect } from './ingress-dialect.ts';

/** An upstream's own JSON text and the dialect it is written in. */
export interface UpstreamBytes {
  text: string;
  dialect: IngressDialect;
}

const bytesOf = new WeakMap<object, UpstreamBytes>();

/**
 * Records `text` as the wire form of `value` in `dialect`. For OpenAI chat, `value` is the object
 * JSON.parse(text) produced; for another dialect, the canonical object converted from it.
 */
export function attachUpstreamBytes(value: object, text: string, dialect: IngressDialect = 'openai-chat'): void {
  bytesOf.set(value, { text, dialect });
}

/** The upstream's text for `value` when it is in `dialect` and still exactly what the object says. */
export function readUpstreamBytes(value: object, dialect: IngressDialect = 'openai-chat'): string | undefined {
  const bytes = bytesOf.get(value);
  return bytes !== undefined && bytes.dialect === dialect ? bytes.text : undefined;
}

/** The upstream's text for `value` whatever its dialect (the cache stores it with its dialect). */
export function readUpstreamBytesOf(value: object): UpstreamBytes | undefined {
  return bytesOf.get(value);
}

export function dropUpstreamBytes(value: object): void {
  bytesOf.delete(value);
}

/** Sets `value.model` to the public name, in the object and in its bytes; bytes that cannot be rewritten are dropped. */
export function renameModel(value: { model: string }, model: string): void {
  const previous = value.model;
  value.model = model;
  if (previous === model) return;
  rewriteField(value, 'model', JSON.stringify(previous), JSON.stringify(model));
}

/**
 * Every `"model":"from"` in pass-through SSE text renamed: compact and spaced (`"model": "from"`) as
 * upstreams write it. Inside a JSON string every quote is escaped, so only real fields match.
 */
export function renameModelInText(text: string, from: string, to: string): string {
  const old = JSON.stringify(from);
  const next = JSON.stringify(to);
  let out = text.replaceAll(`"model":${old}`, `"model":${next}`);
  if (out.includes(`"model": ${old}`)) out = out.replaceAll(`"model": ${old}`, `"model": ${next}`);
  return out;
}

/**
 * Replaces the first `"key": old` in the object's bytes (`old` and `next` as JSON texts). The top-level
 * field comes first in every OpenAI object that has it (id, object, created, model before choices);
 * anything nested that holds a quote inside a string is escaped, so it cannot match.
 */
export function rewriteField(value: object, key: string, old: string, next: string): void {
  const bytes = bytesOf.get(value);
  if (bytes === undefined) return;
  const rewritten = replaceJsonField(bytes.text, key, old, next);
  if (rewritten === undefined) bytesOf.delete(value);
  else bytesOf.set(value, { text: rewritten, dialect: bytes.dialect });
}

/** `text` with the first `"key"<ws>:<ws>old` changed to `"key":next`; undefined when there is none. */
export function replaceJsonField(text: string, key: string, old: string, next: string): string | undefined {
  const i = findJsonValue(text, key, (t, at) => {
    if (!t.startsWith(old, at)) return false;
    // A number must end there (created: 17 must not match 170).
    const after = t.charCodeAt(at + old.length);
    return !(after >= 48 && after <= 57) && after !== 46;
  });
  return i < 0 ? undefined : text.slice(0, i) + next + text.slice(i + old.length);
}

/**
 * Index of the value of the first `"key"<ws>:<ws>` whose value `accepts`, or -1. Outside a JSON string a
 * quote is never escaped and inside one it always is, so an unescaped `"key":` is a key wherever it sits.
 */
export function findJsonValue(text: string, key: string, accepts: (text: string, at: number) => boolean): number {
  const name = `"${key}"`;
  let from = 0;
  for (;;) {
    const at = text.indexOf(name, from);
    if (at < 0) return -1;
    let i = at + name.length;
    while (isSpace(text.charCodeAt(i))) i++;
    if (text.charCodeAt(i) === 58 /* : */) {
      i++;
      while (isSpace(text.charCodeAt(i))) i++;
      if (accepts(text, i)) return i;
    }
    from = at + name.length;
  }
}

function isSpace(code: number): boolean {
  return code === 32 || code === 10 || code === 13 || code === 9;
}
