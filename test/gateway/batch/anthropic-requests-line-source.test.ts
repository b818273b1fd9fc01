// An Anthropic Message Batches body read as its items while it streams: byte ranges that read each item back,
// brackets and quotes inside strings, other top-level fields kept and checked, every malformed body refused,
// any chunking giving the same items; then the validator's Anthropic rules (custom_id, params) on top.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { readAnthropicRequests } from '../../../src/gateway/batch/anthropic-requests-line-source.ts';
import type { BatchSourceRecord } from '../../../src/gateway/wire/jsonl-line-source.ts';
import { inChunks, key, openFixture, runValidation, type Fixture } from './batch-validate-fixtures.ts';

async function items(body: string | Buffer, chunk = 1 << 16, maxLineBytes = 1 << 20): Promise<BatchSourceRecord[]> {
  const out: BatchSourceRecord[] = [];
  for await (const record of readAnthropicRequests(inChunks(Buffer.isBuffer(body) ? body : Buffer.from(body), chunk), { maxLineBytes })) out.push(record);
  return out;
}

const request = (id: string, content: string, model = 'claude-sonnet-4.5') => ({ custom_id: id, params: { model, max_tokens: 100, messages: [{ role: 'user', content }] } });

describe('readAnthropicRequests', () => {
  it('yields each item with the byte range that reads it back, whatever the chunks', async () => {
    const tricky = ['plain', 'brackets ] } [ { inside', 'quotes \\" and \\\\ and "', 'unicode é 日本 🎉'];
    const reqs = tricky.map((t, i) => request(`r${i}`, t));
    const body = Buffer.from(`\n { "x_extra": {"a": [1, {"b": "]"}]},\n  "requests" : [\n ${reqs.map((r) => JSON.stringify(r)).join(' ,\n')} ],\n "after": "requests" }\n`);
    const whole = await items(body);
    assert.equal(whole.length, 4);
    for (const [i, item] of whole.entries()) {
      assert.equal(item.lineNo, i + 1);
      assert.deepEqual(JSON.parse(body.subarray(item.byteOffset, item.byteOffset + item.byteLength).toString('utf8')), reqs[i]);
      assert.deepEqual(JSON.parse(item.bytes!.toString('utf8')), reqs[i]);
    }
    for (const size of [1, 2, 3, 7, 64]) assert.deepEqual(await items(body, size), whole, `chunks of ${size}`);
  });

  it('yields non-object items for the validator to refuse, and an empty array as no items', async () => {
    const got = await items('{"requests": [1, "two" , null,[3]]}', 1);
    assert.deepEqual(
      got.map((r) => r.bytes?.toString()),
      ['1', '"two"', 'null', '[3]'],
    );
    assert.deepEqual(await items('{"requests": []}'), []);
  });

  it('keeps only the length of an item over the limit', async () => {
    const body = JSON.stringify({ requests: [request('a', 'x'.repeat(2000)), request('b', 'y')] });
    const got = await items(body, 100, 500);
    assert.equal(got[0]!.problem, 'too_long');
    assert.equal(got[0]!.bytes, undefined);
    assert.ok(got[0]!.byteLength > 2000);
    assert.equal(got[1]!.problem, undefined);
  });

  it('refuses every malformed body with INVALID_ARG on `requests`', async () => {
    const bad = [
      '',
      '[]',
      '"requests"',
      '{}',
      '{"requests": {}}',
      '{"requests": "x"}',
      '{"requests": [{}, ]}',
      '{"requests": [, {}]}',
      '{"requests": [{} {}]}',
      '{"requests": [{}]',
      '{"requests": [{}]} x',
      '{"requests": [{}]}}',
      '{"requests": [], "requests": []}',
      '{"requests": [], "requests": 1}',
      '{"requests": [}',
      '{"requests": [:]}',
      '{"a" 1, "requests": []}',
      '{requests: []}',
      '{"requests": [], "x": [1,}',
      `{"requests": [${'['.repeat(200)}${']'.repeat(200)}]}`,
      `{"x": ${'{"a":'.repeat(200)}1${'}'.repeat(200)}, "requests": []}`,
    ];
    for (const body of bad) {
      await assert.rejects(
        items(body, 3),
        (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && err.param === 'requests',
        `should refuse ${JSON.stringify(body.slice(0, 60))}`,
      );
    }
  });

  it('reads an escaped key as JSON does', async () => {
    assert.equal((await items('{"requ\\u0065sts": [{"custom_id": "a"}]}')).length, 1);
  });
});

describe('validateBatchFile (Anthropic requests)', () => {
  let fixture: Fixture;
  before(async () => {
    fixture = await openFixture();
  });
  after(() => fixture.close());

  it('checks custom_id by Anthropic rule, params with the Messages codec, and names params paths', async () => {
    const body = JSON.stringify({
      requests: [
        request('ok-1', 'hello'),
        request('bad id!', 'x'),
        { custom_id: 'no-params' },
        request('not-allowed', 'x', 'gpt-4.1'),
        { custom_id: 'bad-params', params: { model: 'claude-sonnet-4.5', messages: [] } },
        request('ok-1', 'again'),
        7,
        request('ok-2', 'bye'),
      ],
    });
    const { result } = await runValidation(fixture, inChunks(Buffer.from(body), 13), { format: 'anthropic', key: key({ allowedModels: ['claude-sonnet-4.5'] }) });
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.code, e.param]),
      [
        [2, 'invalid_custom_id', 'custom_id'],
        [3, 'missing_required_parameter', 'params'],
        [4, 'model_not_allowed', 'params.model'],
        [5, 'invalid_request', 'params.messages'],
        [6, 'duplicate_custom_id', 'custom_id'],
        [7, 'invalid_json_line', null],
      ],
    );
    assert.equal(result.valid, 2);
  });

  it('passes a good batch with byte ranges into the body and the Messages max_tokens as the cost bound', async () => {
    const body = Buffer.from(JSON.stringify({ requests: [request('a', 'one'), request('b', 'two')] }));
    const { result, lines } = await runValidation(fixture, inChunks(body, 5), { format: 'anthropic' });
    assert.equal(result.ok, true);
    assert.deepEqual(
      lines.map((l) => [l.lineNo, l.customId, l.model]),
      [
        [1, 'a', 'claude-sonnet-4.5'],
        [2, 'b', 'claude-sonnet-4.5'],
      ],
    );
    const first = JSON.parse(body.subarray(lines[0]!.byteOffset, lines[0]!.byteOffset + lines[0]!.byteLength).toString('utf8'));
    assert.equal(first.custom_id, 'a');
    const model = fixture.catalog.findModel('claude-sonnet-4.5')!;
    // max_tokens 100 bounds the answer, at the dearer of the model's two deployments.
    assert.ok(lines[0]!.maxCostMicros >= fixture.billing.estimateForModel({ model, promptTokens: 1, maxCompletionTokens: 100 }));
    assert.ok(lines[0]!.maxCostMicros < fixture.billing.estimateForModel({ model, promptTokens: 100, maxCompletionTokens: 100 }));
  });
});
