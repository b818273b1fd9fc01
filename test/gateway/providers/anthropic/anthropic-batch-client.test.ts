// Herd's Anthropic batch client against the local Message Batches upstream: the whole lifecycle, partial
// failures, expiry, cancel, 429 on create, the documented limits and custom_id rule, the key kept out of errors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { HerdError } from '../../../../src/core/errors.ts';
import { UpstreamError } from '../../../../src/gateway/protocol/upstream-error.ts';
import { createAnthropicBatchClient } from '../../../../src/gateway/providers/anthropic/anthropic-batch-client.ts';
import type { UpstreamBatchClient, UpstreamBatchLine, UpstreamBatchResult } from '../../../../src/gateway/providers/upstream-batch-client.ts';
import { FakeAnthropicBatches } from '../../../helpers/fake-anthropic-batches.ts';
import { fakePromptText, fakeReplyText, fakeTokens } from '../../../helpers/fake-batch-answers.ts';
import { startMockUpstream } from '../../helpers/mock-upstream.ts';

const KEY = 'sk-ant-upstream-batch-secret';
const signal = new AbortController().signal;

function messageLine(i: number): UpstreamBatchLine {
  return { customId: `line-${i}`, body: { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: `question ${i}` }] } };
}

async function* lines(count: number): AsyncGenerator<UpstreamBatchLine> {
  for (let i = 0; i < count; i++) yield messageLine(i);
}

async function collect(results: AsyncIterable<UpstreamBatchResult>): Promise<Map<string, UpstreamBatchResult>> {
  const out = new Map<string, UpstreamBatchResult>();
  for await (const result of results) out.set(result.customId, result);
  return out;
}

describe('Anthropic batch client', () => {
  let fake: FakeAnthropicBatches;
  let client: UpstreamBatchClient;

  before(async () => {
    fake = await FakeAnthropicBatches.start({ apiKey: KEY });
    client = createAnthropicBatchClient({ name: 'anthropic', baseUrl: fake.baseUrl, apiKey: KEY, timeoutMs: 5000 });
  });
  after(async () => {
    await client.close();
    await fake.close();
  });

  it('creates one Message Batch with every request, follows it to ended and reads every message with its usage', async () => {
    const created = await client.submit({ lines: lines(3), signal });
    assert.equal(created.lines, 3);
    assert.equal(created.inputFileId, undefined);
    const upstream = fake.batches.get(created.id)!;
    assert.deepEqual(
      upstream.requests.map((r) => [r.custom_id, r.params]),
      [0, 1, 2].map((i) => [`line-${i}`, messageLine(i).body]),
    );
    const running = await client.poll(created.id, signal);
    assert.deepEqual([running.phase, running.counts.processing, running.counts.total], ['running', 3, 3]);
    assert.ok(running.expiresAt !== undefined && running.expiresAt > Date.now());
    await assert.rejects(
      async () => collect(client.results(created.id, signal)),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG',
    );

    fake.advance(created.id);
    const ended = await client.poll(created.id, signal);
    assert.deepEqual([ended.phase, ended.upstreamStatus, ended.counts.succeeded], ['ended', 'ended', 3]);
    const results = await collect(client.results(created.id, signal));
    const second = results.get('line-1')!;
    assert.ok(second.outcome === 'succeeded');
    const params = messageLine(1).body;
    assert.equal(second.body.type, 'message');
    assert.deepEqual([second.usage?.promptTokens, second.usage?.completionTokens], [fakeTokens(fakePromptText(params)), fakeTokens(fakeReplyText(params))]);
    assert.deepEqual(
      fake.calls.map((c) => `${c.method} ${c.path}`),
      [
        'POST /v1/messages/batches',
        `GET /v1/messages/batches/${created.id}`,
        `GET /v1/messages/batches/${created.id}`,
        `GET /v1/messages/batches/${created.id}`,
        `GET /v1/messages/batches/${created.id}`,
        `GET /v1/messages/batches/${created.id}/results`,
      ],
    );
  });

  it('reads errored requests with the status their error type stands for', async () => {
    fake.failRequests(['line-0'], 'invalid_request_error');
    fake.failRequests(['line-2'], 'api_error');
    const { id } = await client.submit({ lines: lines(3), signal });
    fake.advance(id);
    assert.deepEqual((await client.poll(id, signal)).counts, { total: 3, processing: 0, succeeded: 1, errored: 2, canceled: 0, expired: 0 });
    const results = await collect(client.results(id, signal));
    const refused = results.get('line-0')!;
    assert.ok(refused.outcome === 'errored');
    assert.deepEqual([refused.statusCode, refused.error.type], [400, 'invalid_request_error']);
    const broken = results.get('line-2')!;
    assert.ok(broken.outcome === 'errored' && broken.statusCode === 500);
    fake.failing.clear();
  });

  it('an expired batch keeps what was answered; the rest come back expired', async () => {
    const { id } = await client.submit({ lines: lines(3), signal });
    fake.progress(id, 2);
    fake.expire(id);
    const status = await client.poll(id, signal);
    assert.deepEqual([status.phase, status.counts.succeeded, status.counts.expired], ['ended', 2, 1]);
    const results = await collect(client.results(id, signal));
    assert.deepEqual([results.get('line-0')!.outcome, results.get('line-2')!.outcome], ['succeeded', 'expired']);
  });

  it('cancels: canceling, then ended with the unanswered requests canceled', async () => {
    const { id } = await client.submit({ lines: lines(3), signal });
    fake.progress(id, 1);
    const canceling = await client.cancel(id, signal);
    assert.deepEqual([canceling.phase, canceling.upstreamStatus], ['cancelling', 'canceling']);
    fake.advance(id);
    const status = await client.poll(id, signal);
    assert.deepEqual([status.phase, status.counts.succeeded, status.counts.canceled], ['ended', 1, 2]);
    const results = await collect(client.results(id, signal));
    assert.equal(results.get('line-2')!.outcome, 'canceled');
  });

  it('429 on create is an UPSTREAM_RATE_LIMITED error with the Retry-After', async () => {
    fake.rejectCreates(1, 11);
    const error = await client.submit({ lines: lines(1), signal }).catch((err: unknown) => err);
    assert.ok(error instanceof UpstreamError);
    assert.deepEqual([error.code, error.failure, error.retryAfterSeconds], ['UPSTREAM_RATE_LIMITED', 'rate_limited', 11]);
    assert.ok((await client.submit({ lines: lines(1), signal })).id.startsWith('msgbatch_'));
  });

  it('refuses, before the batch exists, requests past the limits and custom_ids Anthropic would refuse', async () => {
    const small = createAnthropicBatchClient({ name: 'anthropic', baseUrl: fake.baseUrl, apiKey: KEY, limits: { maxLines: 5, maxBytes: 300 } });
    const count = fake.batches.size;
    try {
      assert.deepEqual(small.limits, { maxLines: 5, maxBytes: 300 });
      await assert.rejects(small.submit({ lines: lines(4), signal }), (err: unknown) => err instanceof HerdError && err.code === 'PAYLOAD_TOO_LARGE');
      const bad = { customId: 'has a space', body: messageLine(0).body };
      await assert.rejects(small.submit({ lines: [bad], signal }), (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && /custom_id/.test(err.message));
      assert.equal(fake.batches.size, count);
      assert.equal((await small.submit({ lines: lines(1), signal })).lines, 1);
    } finally {
      await small.close();
    }
    assert.equal(await client.findByMetadata('herd_upstream_batch', 'ub-1', signal), undefined);
  });

  it('never puts the key in an error', async () => {
    const wrong = createAnthropicBatchClient({ name: 'anthropic', baseUrl: fake.baseUrl, apiKey: 'sk-ant-wrong-key-here' });
    try {
      const error = await wrong.poll('msgbatch_missing', signal).catch((err: unknown) => err);
      assert.ok(error instanceof UpstreamError && error.failure === 'auth');
      assert.ok(!error.message.includes('sk-ant-wrong-key-here'));
    } finally {
      await wrong.close();
    }
  });

  it('reads the documented batch and result lines (test/fixtures/anthropic), and never follows a results_url off its base URL', async () => {
    const fixture = (name: string) => readFileSync(resolve(import.meta.dirname, '../../../fixtures/anthropic', name));
    const id = 'msgbatch_013Zva2CMHLNnXjNJJKqJ2EF';
    const mock = await startMockUpstream((req, res) => {
      if (req.url === `/v1/messages/batches/${id}`) return void res.writeHead(200, { 'content-type': 'application/json' }).end(fixture('message-batch.json'));
      res.writeHead(200, { 'content-type': 'application/binary' }).end(fixture('message-batch-results.jsonl'));
    });
    const reader = createAnthropicBatchClient({ name: 'anthropic', baseUrl: mock.url, apiKey: KEY });
    try {
      const status = await reader.poll(id, signal);
      assert.deepEqual([status.phase, status.counts.total, status.expiresAt], ['ended', 100, Date.parse('2024-09-25T18:37:24.100435Z')]);
      const results = await collect(reader.results(id, signal));
      const ok = results.get('my-second-request')!;
      assert.ok(ok.outcome === 'succeeded');
      assert.deepEqual([ok.usage?.promptTokens, ok.usage?.completionTokens], [11, 36]);
      const refused = results.get('my-first-request')!;
      assert.ok(refused.outcome === 'errored');
      assert.deepEqual([refused.statusCode, refused.error.type, refused.error.message], [400, 'invalid_request_error', 'Validation error: max_tokens: Field required']);
      assert.deepEqual([results.get('my-third-request')!.outcome, results.get('my-fourth-request')!.outcome], ['canceled', 'expired']);
      // results_url names api.anthropic.com, not the configured base: the key goes to the documented path here instead.
      assert.equal(mock.requests.at(-1)!.url, `/v1/messages/batches/${id}/results`);
      assert.equal(mock.requests.at(-1)!.headers['x-api-key'], KEY);
    } finally {
      await reader.close();
      await mock.close();
    }
  });
});
