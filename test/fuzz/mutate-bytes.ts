// Arbitraries for fuzzing: valid samples mutated the way a buggy client, a proxy or an attacker would
// (bit flips, cuts, splices, repeated regions, interesting tokens), plus plain random bytes.
import fc from 'fast-check';

/** Tokens that tend to reach edge cases in parsers of JSON, pbtxt, YAML, SSE and HTTP. */
const TOKENS = [
  '-1',
  '0',
  '1e400',
  '-0',
  'NaN',
  'Infinity',
  '18446744073709551616',
  '9007199254740993',
  '4294967296',
  '99999999999999999999',
  '"',
  '\\',
  '\\u0000',
  '\\ud800',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  '\n',
  '\r\n',
  '\r',
  '\t',
  '\u0000',
  '\uffff',
  '\u2028',
  '🙂',
  'null',
  'true',
  '[[[[[[[[[[',
  '{{{{{{{{',
  '&a',
  '*a',
  '!!binary',
  '<<: *a',
  '${HOME}',
  '${',
  '#',
  '%',
  'data: ',
  'event: ',
  'data: [DONE]',
  '\n\n',
  ':',
  'content-length: 99999999',
  'transfer-encoding: chunked',
  '0\r\n\r\n',
  'Inference-Header-Content-Length: 5',
];

type Mutation =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'token'; at: number; token: number }
  | { kind: 'delete'; at: number; length: number }
  | { kind: 'repeat'; at: number; length: number; times: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'splice'; at: number; other: number; from: number; length: number };

// Positions are fractions of the current length, so one mutation list fits any sample.
const at = fc.double({ min: 0, max: 1, noNaN: true });
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at, bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('set' as const), at, byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('insert' as const), at, bytes: fc.uint8Array({ maxLength: 16 }) }),
  fc.record({ kind: fc.constant('token' as const), at, token: fc.integer({ min: 0, max: TOKENS.length - 1 }) }),
  fc.record({ kind: fc.constant('delete' as const), at, length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant('repeat' as const), at, length: fc.integer({ min: 1, max: 32 }), times: fc.integer({ min: 2, max: 64 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at }),
  fc.record({ kind: fc.constant('splice' as const), at, other: fc.nat(), from: at, length: fc.integer({ min: 1, max: 128 }) }),
);

function apply(input: Buffer, m: Mutation, samples: readonly Buffer[]): Buffer {
  const pos = Math.min(input.length, Math.floor(m.at * (input.length + 1)));
  switch (m.kind) {
    case 'flip': {
      if (input.length === 0) return input;
      const out = Buffer.from(input);
      const i = Math.min(pos, out.length - 1);
      out[i] = (out[i] as number) ^ (1 << m.bit);
      return out;
    }
    case 'set': {
      if (input.length === 0) return Buffer.from([m.byte]);
      const out = Buffer.from(input);
      out[Math.min(pos, out.length - 1)] = m.byte;
      return out;
    }
    case 'insert':
      return Buffer.concat([input.subarray(0, pos), m.bytes, input.subarray(pos)]);
    case 'token':
      return Buffer.concat([input.subarray(0, pos), Buffer.from(TOKENS[m.token] as string), input.subarray(pos)]);
    case 'delete':
      return Buffer.concat([input.subarray(0, pos), input.subarray(pos + m.length)]);
    case 'repeat': {
      const region = input.subarray(pos, pos + m.length);
      return Buffer.concat([input.subarray(0, pos), ...Array.from({ length: m.times }, () => region), input.subarray(pos)]);
    }
    case 'truncate':
      return input.subarray(0, pos);
    case 'splice': {
      const other = samples[m.other % samples.length] as Buffer;
      const from = Math.floor(m.from * other.length);
      return Buffer.concat([input.subarray(0, pos), other.subarray(from, from + m.length), input.subarray(pos)]);
    }
  }
}

/** One of `samples` with up to `maxMutations` mutations applied (none, sometimes: the valid sample itself). */
export function mutatedBytes(samples: readonly (string | Uint8Array)[], maxMutations = 6): fc.Arbitrary<Buffer> {
  const buffers = samples.map((s) => (typeof s === 'string' ? Buffer.from(s) : Buffer.from(s)));
  return fc
    .tuple(fc.nat({ max: buffers.length - 1 }), fc.array(mutation, { maxLength: maxMutations }))
    .map(([index, mutations]) => mutations.reduce((bytes, m) => apply(bytes, m, buffers), buffers[index] as Buffer));
}

/** Mutated samples most of the time, random bytes and random text the rest. */
export function fuzzBytes(samples: readonly (string | Uint8Array)[], maxLength = 4096): fc.Arbitrary<Buffer> {
  return fc.oneof(
    { weight: 6, arbitrary: mutatedBytes(samples) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength }).map((b) => Buffer.from(b)) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength }).map((s) => Buffer.from(s)) },
  );
}

/** The same, as text (invalid UTF-8 becomes U+FFFD, as a UTF-8 reader would see it). */
export function fuzzText(samples: readonly string[], maxLength = 4096): fc.Arbitrary<string> {
  return fuzzBytes(samples, maxLength).map((b) => b.toString('utf8'));
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const edgeValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, -0, 1.5, 2 ** 31, 2 ** 53, 1e308, -1e308, '', 'x'.repeat(300), [], {}, [[]], { '': null }, '__proto__', 'constructor'),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Every node of a JSON tree, as the path to it. */
function paths(value: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) paths(value[i] as Json, [...prefix, i], out);
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

function replaceAt(root: Json, path: (string | number)[], replacement: unknown, remove: boolean): unknown {
  if (path.length === 0) return replacement;
  const copy: Json = structuredClone(root);
  let node: Json = copy;
  for (const key of path.slice(0, -1)) node = (node as Record<string | number, Json>)[key] as Json;
  const last = path.at(-1) as string | number;
  if (remove && Array.isArray(node)) node.splice(last as number, 1);
  else if (remove) delete (node as Record<string, Json>)[last as string];
  else (node as Record<string | number, unknown>)[last] = replacement;
  return copy;
}

/** A JSON sample with up to three of its values replaced by edge cases or removed: valid JSON, wrong in its shape. */
export function mutatedJsonValue(samples: readonly unknown[]): fc.Arbitrary<unknown> {
  const trees = samples as Json[];
  return fc
    .tuple(fc.nat({ max: trees.length - 1 }), fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), edgeValue, fc.boolean()), { minLength: 1, maxLength: 3 }))
    .map(([index, edits]) =>
      edits.reduce<unknown>((tree, [at, replacement, remove]) => {
        const all = paths(tree as Json);
        return replaceAt(tree as Json, all[Math.floor(at * all.length)] ?? [], replacement, remove && Math.floor(at * all.length) > 0);
      }, trees[index]),
    );
}
