// What a bridged attempt does with the members of a client's body the canonical request does not carry.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HerdError } from '../../../src/core/errors.ts';
import type { ChatRequest, UnmodeledField } from '../../../src/gateway/protocol/chat-types.ts';
import { bridgeUnmodeled } from '../../../src/gateway/providers/bridge-unmodeled.ts';

const request = (unmodeled?: UnmodeledField[]): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...(unmodeled ? { unmodeled } : {}) });
const drop = (param: string): UnmodeledField => ({ param, bridged: 'drop', reason: 'no place for it', value: 1 });

describe('bridgeUnmodeled', () => {
  it('has nothing to say about a request without unmodeled members', () => {
    assert.deepEqual(bridgeUnmodeled({ request: request(), upstreamModel: 'u' }, 'anthropic'), []);
    assert.deepEqual(bridgeUnmodeled({ request: request([]), upstreamModel: 'u', strict: true }, 'anthropic'), []);
  });

  it('names each dropped member in a warning', () => {
    const warnings = bridgeUnmodeled({ request: request([drop('client_metadata'), drop('reasoning.context')]), upstreamModel: 'u' }, 'anthropic');
    assert.deepEqual(
      warnings.map((w) => w.param),
      ['client_metadata', 'reasoning.context'],
    );
    assert.match(warnings[0]?.message ?? '', /anthropic cannot take 'client_metadata' \(no place for it\); it was not sent/);
  });

  it('refuses a member whose table says refuse, naming it, even when others would only be dropped', () => {
    const refuse: UnmodeledField = { param: 'previous_response_id', bridged: 'refuse', reason: 'needs the stored response', value: 'resp_1' };
    assert.throws(
      () => bridgeUnmodeled({ request: request([drop('store'), refuse]), upstreamModel: 'u' }, 'anthropic'),
      (err: HerdError) => err.code === 'UNSUPPORTED' && err.param === 'previous_response_id' && /needs the stored response/.test(err.message),
    );
  });

  it('on a strict route refuses what it would drop', () => {
    assert.throws(
      () => bridgeUnmodeled({ request: request([drop('client_metadata')]), upstreamModel: 'u', strict: true }, 'gemini'),
      (err: HerdError) => err.code === 'UNSUPPORTED' && err.param === 'client_metadata' && /strict/.test(err.message),
    );
  });
});
