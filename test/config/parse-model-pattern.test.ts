// Model-id globs: `*` and `?` only, anchored, case-sensitive, every other character literal; and the
// check that a glob listed earlier leaves a later one nothing to match.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coversPattern, isModelGlob, parseModelPattern } from '../../src/config/parse-model-pattern.ts';

test('a glob matches whole ids: * any run (empty too), ? one character, the rest literally and case-sensitively', () => {
  const claude = parseModelPattern('claude-*');
  assert.deepEqual(
    ['claude-opus-4-8', 'claude-sonnet-4-5-20250929', 'claude-', 'Claude-opus', 'xclaude-a', 'claude'].map((id) => claude.test(id)),
    [true, true, true, false, false, false],
  );
  const gpt = parseModelPattern('gpt-5?');
  assert.deepEqual(
    ['gpt-5o', 'gpt-5', 'gpt-5-mini', 'gpt-5é'].map((id) => gpt.test(id)),
    [true, false, false, true],
  );
  // Regex syntax means nothing in a glob.
  assert.equal(parseModelPattern('a.b*').test('axb'), false);
  assert.equal(parseModelPattern('a[1]+(x)|y/*').test('a[1]+(x)|y/z'), true);
  assert.equal(parseModelPattern('*').test(''), true);
});

test('isModelGlob: only * and ? make a glob', () => {
  assert.deepEqual(['claude-*', 'gpt-5?', 'gpt-5', 'a[1]'].map(isModelGlob), [true, true, false, false]);
});

test('coversPattern: an earlier glob covers a later one when it matches every id the later one can', () => {
  assert.equal(coversPattern('claude-*', 'claude-opus-*'), true);
  assert.equal(coversPattern('*', 'a?'), true);
  assert.equal(coversPattern('*-mini', 'gpt-*-mini'), true);
  assert.equal(coversPattern('gpt-?', 'gpt-5'), true);
  assert.equal(coversPattern('claude-opus-*', 'claude-*'), false);
  assert.equal(coversPattern('a?', 'a*'), false, 'a* also matches a and abc');
  assert.equal(coversPattern('gpt-5', 'gpt-5*'), false);
  assert.equal(coversPattern('claude-*-4-5', 'claude-*'), false);
});

test('matching stays fast on many stars against a long id that almost matches', () => {
  const glob = parseModelPattern(`${'*a'.repeat(20)}*b`);
  assert.equal(glob.test('a'.repeat(5000)), false);
  assert.equal(glob.test(`${'a'.repeat(5000)}b`), true);
});
