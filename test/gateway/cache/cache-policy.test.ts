// Which requests read and write the cache (header × default_mode × determinism), and which answers
// may be stored or served.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import type { ChatChoice, ChatRequest, ChatResponse } from '../../../src/gateway/protocol/chat-types.ts';
import { evaluateCachedAnswer, evaluateCachePolicy, parseCacheDirectives, type CacheBasis } from '../../../src/gateway/cache/cache-policy.ts';

const request = (fields: Partial<ChatRequest>): ChatRequest => ({ model: 'gpt4', messages: [{ role: 'user', content: 'Hi' }], ...fields });
const T0 = { temperature: 0 };

describe('evaluateCachePolicy', () => {
  // [request fields, x-herd-cache, default_mode, read, write, basis]
  const TABLE: Array<[Partial<ChatRequest>, string | string[] | undefined, 'deterministic' | 'off', boolean, boolean, CacheBasis]> = [
    [T0, undefined, 'deterministic', true, true, 'deterministic'],
    [{ temperature: 0, n: 1 }, undefined, 'deterministic', true, true, 'deterministic'],
    [{ temperature: 0, n: 2 }, undefined, 'deterministic', false, false, 'nondeterministic'],
    [{ temperature: 0.7 }, undefined, 'deterministic', false, false, 'nondeterministic'],
    [{}, undefined, 'deterministic', false, false, 'nondeterministic'], // absent temperature is 1
    [{ temperature: 0.7 }, 'use', 'deterministic', true, true, 'opted-in'],
    [{ temperature: 0, n: 3 }, 'use', 'deterministic', true, true, 'opted-in'],
    [T0, undefined, 'off', false, false, 'mode-off'],
    [T0, 'use', 'off', true, true, 'opted-in'],
    [T0, 'bypass', 'deterministic', false, true, 'deterministic'],
    [T0, 'no-store', 'deterministic', true, false, 'deterministic'],
    [T0, 'bypass, no-store', 'deterministic', false, false, 'deterministic'],
    [{ temperature: 1 }, 'use, no-store', 'deterministic', true, false, 'opted-in'],
    [{ temperature: 1 }, ['use', 'bypass'], 'off', false, true, 'opted-in'],
    [{ temperature: 1 }, 'bypass', 'deterministic', false, false, 'nondeterministic'],
    [T0, ' USE ', 'off', true, true, 'opted-in'],
    [T0, '', 'deterministic', true, true, 'deterministic'],
  ];
  for (const [fields, header, mode, read, write, basis] of TABLE) {
    it(`${JSON.stringify(fields)} with ${JSON.stringify(header)} in mode ${mode}: read ${read}, write ${write} (${basis})`, () => {
      const decision = evaluateCachePolicy(request(fields), { 'x-herd-cache': header }, { default_mode: mode });
      assert.deepEqual([decision.read, decision.write, decision.basis], [read, write, basis]);
      assert.equal(decision.optedIn, basis === 'opted-in');
      assert.ok(decision.reason.length > 0);
    });
  }

  it('explains itself in the reason', () => {
    assert.equal(
      evaluateCachePolicy(request({ temperature: 0.7 }), {}, { default_mode: 'deterministic' }).reason,
      'not deterministic (temperature 0.7); send x-herd-cache: use to cache',
    );
    assert.equal(evaluateCachePolicy(request(T0), { 'x-herd-cache': 'bypass' }, { default_mode: 'deterministic' }).reason, 'deterministic (temperature 0, n 1); bypass');
  });

  it('rejects an unknown directive as INVALID_ARG naming the header', () => {
    assert.throws(
      () => parseCacheDirectives('use, nocache'),
      (err: unknown) => {
        assert.ok(err instanceof HerdError);
        assert.equal(err.code, 'INVALID_ARG');
        assert.equal(err.param, 'x-herd-cache');
        assert.match(err.message, /'nocache' is not one of use, bypass, no-store/);
        return true;
      },
    );
    assert.throws(() => evaluateCachePolicy(request(T0), { 'x-herd-cache': 'hit' }, { default_mode: 'deterministic' }), HerdError);
  });
});

describe('evaluateCachedAnswer', () => {
  const choice = (fields: Omit<Partial<ChatChoice>, 'message'> & { message?: Partial<ChatChoice['message']> } = {}): ChatChoice => ({
    index: 0,
    finish_reason: 'stop',
    ...fields,
    message: { role: 'assistant', content: 'Hello', ...fields.message },
  });
  const answer = (choices: ChatChoice[], model = 'gpt-4.1'): ChatResponse => ({ id: 'c', object: 'chat.completion', created: 1, model, choices });
  const CALL = { id: 'call_1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };

  // [answer, optedIn, cacheable]
  const TABLE: Array<[string, ChatResponse, boolean, boolean]> = [
    ['a complete answer', answer([choice()]), false, true],
    ['n=2, both complete', answer([choice(), choice({ index: 1 })]), true, true],
    ['from a fallback model', answer([choice()], 'deepseek-v3.2'), true, false],
    ['no choices', answer([]), true, false],
    ['truncated (length)', answer([choice({ finish_reason: 'length' })]), true, false],
    ['content filtered', answer([choice({ finish_reason: 'content_filter' })]), true, false],
    ['incomplete (null finish)', answer([choice({ finish_reason: null })]), true, false],
    ['a refusal', answer([choice({ message: { content: null, refusal: 'I cannot' } })]), true, false],
    ['refusal: null is no refusal', answer([choice({ message: { refusal: null } })]), false, true],
    ['tool calls without opt-in', answer([choice({ finish_reason: 'tool_calls', message: { content: null, tool_calls: [CALL] } })]), false, false],
    ['tool calls with opt-in', answer([choice({ finish_reason: 'tool_calls', message: { content: null, tool_calls: [CALL] } })]), true, true],
    ['tool calls on a stop finish, without opt-in', answer([choice({ message: { tool_calls: [CALL] } })]), false, false],
    ['one bad choice of two', answer([choice(), choice({ index: 1, finish_reason: 'length' })]), true, false],
  ];
  for (const [name, response, optedIn, cacheable] of TABLE) {
    it(`${name}${optedIn ? ' (opted in)' : ''}: ${cacheable ? 'cached' : 'not cached'}`, () => {
      const verdict = evaluateCachedAnswer(response, { model: 'gpt-4.1', optedIn });
      assert.equal(verdict.cacheable, cacheable, verdict.reason);
    });
  }
});
