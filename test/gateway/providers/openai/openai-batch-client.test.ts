// Herd's OpenAI batch client against the local Files + Batch API upstream: the whole lifecycle, partial
// failures, expiry, cancel, 429 on create, the documented limits, and the key kept out of every error.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { HerdError } from '../../../../src/core/errors.ts';
import { UpstreamError } from '../../../../src/gateway/protocol/upstream-error.ts';
import { createOpenAIBatchClient } from '../../../../src/gateway/providers/openai/openai-batch-client.ts';
import type { UpstreamBatchClient, UpstreamBatchLine, UpstreamBatchResult } from '../../../../src/gateway/providers/upstream-batch-client.ts';
import { fakePromptText, fakeReplyText, fakeTokens } from '../../../helpers/fake-batch-answers.ts';
import { FakeOpenAIBatches } from '../../../helpers/fake-openai-batches.ts';
import { startMockUpstream } from '../../helpers/mock-upstream.ts';

const KEY = 'sk-upstream-openai-batch-secret';
const signal = new AbortController().signal;

function chatLine(i: number): UpstreamBatchLine {
  return { customId: `line-${i}`, body: { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: `question ${i}` }], max_tokens: 20 } };
}

async function* lines(count: number): AsyncGenerator<UpstreamBatchLine> {
  for (let i = 0; i < count; i++) yield chatLine(i);
}

async function collect(results: AsyncIterable<UpstreamBatchResult>): Promise<Map<string, UpstreamBatchResult>> {
  const out = new Map<string, UpstreamBatchResult>();
  for await (const result of results) out.set(result.customId, result);
  return out;
}

describe('OpenAI batch client', () => {
  let fake: FakeOpenAIBatches;
  let client: UpstreamBatchClient;

  before(async () => {
    fake = await FakeOpenAIBatches.start({ apiKey: KEY });
    client = createOpenAIBatchClient({ name: 'openai', baseUrl: fake.baseUrl, apiKey: KEY, timeoutMs: 5000 });
  });
  after(async () => {
    await client.close();
    await fake.close();
  });

  it('uploads the lines as a JSONL file, creates the batch, follows it to completed and reads every answer with its usage', async () => {
    const uploaded: string[] = [];
    const created = await client.submit({ lines: lines(3), metadata: { herd_upstream_batch: 'ub-1' }, onInputUploaded: (id) => void uploaded.push(id), signal });
    assert.equal(created.lines, 3);
    assert.deepEqual(uploaded, [created.inputFileId]);
    const upstream = fake.batches.get(created.id)!;
    assert.deepEqual(
      upstream.lines.map((l) => [l.custom_id, l.method, l.url, l.body.messages]),
      [0, 1, 2].map((i) => [`line-${i}`, 'POST', '/v1/chat/completions', [{ role: 'user', content: `question ${i}` }]]),
    );
    assert.equal(fake.files.get(created.inputFileId!)!.purpose, 'batch');
    assert.deepEqual(upstream.wire.metadata, { herd_upstream_batch: 'ub-1' });

    assert.equal((await client.poll(created.id, signal)).phase, 'running');
    fake.advance(created.id);
    const running = await client.poll(created.id, signal);
    assert.deepEqual([running.upstreamStatus, running.counts.processing], ['in_progress', 3]);
    fake.runToEnd(created.id);
    const ended = await client.poll(created.id, signal);
    assert.deepEqual([ended.phase, ended.upstreamStatus, ended.counts.succeeded, ended.counts.errored], ['ended', 'completed', 3, 0]);

    const results = await collect(client.results(created.id, signal));
    assert.equal(results.size, 3);
    const first = results.get('line-1')!;
    assert.equal(first.outcome, 'succeeded');
    if (first.outcome !== 'succeeded') return;
    const body = chatLine(1).body;
    assert.equal(first.statusCode, 200);
    assert.equal(first.body.object, 'chat.completion');
    assert.deepEqual([first.usage?.promptTokens, first.usage?.completionTokens], [fakeTokens(fakePromptText(body)), fakeTokens(fakeReplyText(body))]);
    assert.deepEqual(fake.calls.map((c) => `${c.method} ${c.path.replace(/\?.*/, '')}`).slice(0, 2), ['POST /v1/files', 'POST /v1/batches']);
  });

  it('reads failed lines from the error file with their status and error, next to the answered ones', async () => {
    fake.failLines(['line-0'], 500);
    fake.failLines(['line-2'], 400);
    const { id } = await client.submit({ lines: lines(3), signal });
    fake.runToEnd(id);
    const status = await client.poll(id, signal);
    assert.deepEqual([status.counts.succeeded, status.counts.errored], [1, 2]);
    const results = await collect(client.results(id, signal));
    const failed = results.get('line-0')!;
    assert.equal(failed.outcome, 'errored');
    if (failed.outcome === 'errored') assert.deepEqual([failed.statusCode, failed.error.type], [500, 'server_error']);
    const refused = results.get('line-2')!;
    assert.ok(refused.outcome === 'errored' && refused.statusCode === 400);
    assert.equal(results.get('line-1')!.outcome, 'succeeded');
    fake.failing.clear();
  });

  it('an expired batch keeps what was answered; the rest come back expired', async () => {
    const { id } = await client.submit({ lines: lines(4), signal });
    fake.advance(id);
    fake.progress(id, 1);
    fake.expire(id);
    const status = await client.poll(id, signal);
    assert.deepEqual([status.phase, status.upstreamStatus], ['ended', 'expired']);
    const outcomes = [...(await collect(client.results(id, signal))).values()].map((r) => `${r.customId}:${r.outcome}`).sort();
    assert.deepEqual(outcomes, ['line-0:succeeded', 'line-1:expired', 'line-2:expired', 'line-3:expired']);
  });

  it('cancels: cancelling, then cancelled with the unanswered lines canceled', async () => {
    const { id } = await client.submit({ lines: lines(3), signal });
    fake.advance(id);
    fake.progress(id, 2);
    const cancelling = await client.cancel(id, signal);
    assert.deepEqual([cancelling.phase, cancelling.upstreamStatus], ['cancelling', 'cancelling']);
    fake.advance(id);
    assert.equal((await client.poll(id, signal)).upstreamStatus, 'cancelled');
    const results = await collect(client.results(id, signal));
    assert.deepEqual([results.get('line-1')!.outcome, results.get('line-2')!.outcome], ['succeeded', 'canceled']);
  });

  it('a batch refused at validation is failed, with the upstream line numbers; it has no results', async () => {
    const twice = [chatLine(0), chatLine(0)];
    const { id } = await client.submit({ lines: twice, signal });
    fake.advance(id);
    const status = await client.poll(id, signal);
    assert.equal(status.phase, 'failed');
    assert.match(status.errors?.[0] ?? '', /^line 2: .*duplicate/);
    await assert.rejects(
      async () => collect(client.results(id, signal)),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG',
    );
  });

  it('429 on create is an UPSTREAM_RATE_LIMITED error with the Retry-After, which a retry later gets past', async () => {
    fake.rejectCreates(1, 9);
    const error = await client.submit({ lines: lines(1), signal }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.ok(error instanceof UpstreamError);
    assert.deepEqual([error.code, error.failure, error.retryAfterSeconds, error.status], ['UPSTREAM_RATE_LIMITED', 'rate_limited', 9, 429]);
    assert.ok(error.transient);
    const again = await client.submit({ lines: lines(1), signal });
    assert.ok(fake.batches.has(again.id));
  });

  it('refuses a batch past the limits before it exists upstream (PAYLOAD_TOO_LARGE), and an empty one', async () => {
    const small = createOpenAIBatchClient({ name: 'openai', baseUrl: fake.baseUrl, apiKey: KEY, limits: { maxLines: 2 } });
    const before = { files: fake.files.size, batches: fake.batches.size };
    try {
      assert.deepEqual(small.limits, { maxLines: 2, maxBytes: 200 * 1024 * 1024 });
      await assert.rejects(small.submit({ lines: lines(3), signal }), (err: unknown) => err instanceof HerdError && err.code === 'PAYLOAD_TOO_LARGE' && /line 3/.test(err.message));
      await assert.rejects(small.submit({ lines: [], signal }), (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG');
      assert.deepEqual({ files: fake.files.size, batches: fake.batches.size }, before);
      // The socket of the aborted upload is not reused broken: the next call goes through.
      assert.equal((await small.submit({ lines: lines(2), signal })).lines, 2);
    } finally {
      await small.close();
    }
  });

  it('finds a batch again by its metadata among the newest', async () => {
    const { id } = await client.submit({ lines: lines(1), metadata: { herd_upstream_batch: 'ub-find' }, signal });
    for (let i = 0; i < 3; i++) await client.submit({ lines: lines(1), signal });
    assert.equal(await client.findByMetadata('herd_upstream_batch', 'ub-find', signal), id);
    assert.equal(await client.findByMetadata('herd_upstream_batch', 'ub-none', signal), undefined);
  });

  it('sends embeddings lines to their endpoint and reads prompt-only usage', async () => {
    const line = { customId: 'emb-1', body: { model: 'text-embedding-3-small', input: 'hello there' } };
    const { id } = await client.submit({ lines: [line], endpoint: '/v1/embeddings', signal });
    fake.runToEnd(id);
    const [result] = (await collect(client.results(id, signal))).values();
    assert.ok(result?.outcome === 'succeeded');
    assert.deepEqual([result.usage?.promptTokens, result.usage?.completionTokens], [fakeTokens('hello there'), 0]);
  });

  it('never puts the key in an error, even when the upstream echoes it', async () => {
    const wrong = createOpenAIBatchClient({ name: 'openai', baseUrl: fake.baseUrl, apiKey: 'sk-wrong-key-for-batches' });
    try {
      const error = await wrong.poll('batch_missing', signal).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.ok(error instanceof UpstreamError && error.failure === 'auth');
      assert.ok(!error.message.includes('sk-wrong-key-for-batches'));
    } finally {
      await wrong.close();
    }
    const missing = await client.poll('batch_missing', signal).catch((err: unknown) => err);
    assert.ok(missing instanceof UpstreamError && missing.failure === 'not_found');
  });

  it('reads the documented batch object and result lines (test/fixtures/openai), whatever the piece size', async () => {
    const fixture = (name: string) => readFileSync(resolve(import.meta.dirname, '../../../fixtures/openai', name));
    const output = fixture('batch-output.jsonl');
    const mock = await startMockUpstream((req, res) => {
      if (req.url === '/v1/batches/batch_abc123') return void res.writeHead(200, { 'content-type': 'application/json' }).end(fixture('batch.json'));
      if (req.url === '/v1/files/file-HOWS94/content') return void res.writeHead(200).end();
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      // Seven-byte pieces: lines and multi-byte characters arrive cut anywhere.
      for (let at = 0; at < output.length; at += 7) res.write(output.subarray(at, at + 7));
      res.end();
    });
    const reader = createOpenAIBatchClient({ name: 'openai', baseUrl: `${mock.url}/v1`, apiKey: KEY });
    try {
      const status = await reader.poll('batch_abc123', signal);
      assert.deepEqual(status.counts, { total: 100, succeeded: 95, errored: 5, processing: 0, canceled: 0, expired: 0 });
      assert.deepEqual(status.metadata, { customer_id: 'user_123456789', batch_description: 'Nightly eval job' });
      const results = await collect(reader.results('batch_abc123', signal));
      const ok = results.get('request-2')!;
      assert.ok(ok.outcome === 'succeeded');
      assert.deepEqual([ok.usage?.promptTokens, ok.usage?.completionTokens], [22, 2]);
      const refused = results.get('request-1')!;
      assert.ok(refused.outcome === 'errored');
      assert.deepEqual([refused.statusCode, refused.error], [400, { type: 'invalid_request_error', message: 'Invalid model' }]);
      assert.equal(results.get('request-3')!.outcome, 'expired');
      assert.deepEqual(
        mock.requests.map((r) => r.url),
        ['/v1/batches/batch_abc123', '/v1/batches/batch_abc123', '/v1/files/file-cvaTdG/content', '/v1/files/file-HOWS94/content'],
      );
    } finally {
      await reader.close();
      await mock.close();
    }
  });
});
