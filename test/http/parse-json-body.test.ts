// The one JSON body parser of the gateway's routes: empty, malformed and too deeply nested bodies are the
// client's INVALID_ARG; the depth scan counts arrays and objects, never brackets or escaped quotes in strings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../src/core/errors.ts';
import { checkJsonDepth, MAX_JSON_DEPTH, parseJsonBody } from '../../src/http/parse-json-body.ts';

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const refused = (fn: () => unknown, pattern: RegExp) => assert.throws(fn, (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && pattern.test(err.message));

test('a body nested exactly to the limit parses; one level more is refused', () => {
  assert.deepEqual(JSON.stringify(parseJsonBody(Buffer.from(nested(MAX_JSON_DEPTH)))), nested(MAX_JSON_DEPTH));
  refused(() => parseJsonBody(Buffer.from(nested(MAX_JSON_DEPTH + 1))), /deeper than 128 levels/);
  refused(() => parseJsonBody(Buffer.from(`{"a":${nested(MAX_JSON_DEPTH)}}`)), /deeper than/);
});

test('brackets and escaped quotes inside strings do not count', () => {
  const text = JSON.stringify({ s: `\\"${'[{'.repeat(500)}"\\`, t: ['"]]]"'] });
  assert.doesNotThrow(() => checkJsonDepth(Buffer.from(text)));
  assert.deepEqual(parseJsonBody(Buffer.from(text)), JSON.parse(text));
});

test('only the first `end` bytes are scanned (a KServe binary body after its JSON header)', () => {
  const body = Buffer.concat([Buffer.from('{"inputs":[]}'), Buffer.from(nested(1000))]);
  assert.doesNotThrow(() => checkJsonDepth(body, 13));
  refused(() => checkJsonDepth(body), /deeper than/);
});

test("an empty or malformed body is the client error, with the parser's reason", () => {
  refused(() => parseJsonBody(undefined), /the body is empty/);
  refused(() => parseJsonBody(Buffer.alloc(0)), /the body is empty/);
  refused(() => parseJsonBody(Buffer.from('{"a":')), /could not parse the JSON body/);
});
