// A batch's completion window through the real server: with batch.deadline.margin_ms longer than the 24 h window a
// new batch is already inside the margin, so no line goes upstream; policy expire ends its lines `batch_expired`
// (Anthropic: `expired`) unbilled, policy realtime runs them as realtime requests at the full realtime price.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { type MockUpstream, sendJson, startMockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { messagesOf, readOutput, startUpstreamHerd, submitChatBatch, type UpstreamHerd, until } from './batches-upstream-herd.ts';

const INSIDE_THE_WINDOW = 25 * 3_600_000;

/** A realtime upstream for both dialects' paths: 12 prompt and 3 completion tokens an answer. */
async function startRealtimeUpstream(): Promise<MockUpstream> {
  return startMockUpstream((req, res) => {
    const model = String((req.body as { model?: unknown }).model);
    sendJson(res, 200, {
      id: 'chatcmpl-deadline',
      object: 'chat.completion',
      created: 1741569952,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'late but done', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
    });
  });
}

for (const policy of ['expire', 'realtime'] as const) {
  describe(`batch.deadline.policy: ${policy}, inside the margin from the start`, () => {
    let upstream: MockUpstream;
    let herd: UpstreamHerd;

    before(async () => {
      upstream = await startRealtimeUpstream();
      herd = await startUpstreamHerd(`herd-batches-deadline-${policy}-`, {
        relayUrl: `${upstream.url}/v1`,
        anthropicUrl: upstream.url,
        deadline: { policy, marginMs: INSIDE_THE_WINDOW },
      });
    });
    after(async () => {
      await herd?.close();
      await upstream?.close();
    });

    const rowsOf = (batchId: string) => herd.ledger.prepare('SELECT * FROM ledger_requests WHERE batch_id = ?').all(batchId) as Record<string, number | string | null>[];

    if (policy === 'expire') {
      it('OpenAI: the lines expire, batch_expired in the error file, nothing sent upstream or billed', async () => {
        const { client, batch } = await submitChatBatch(herd.server.httpUrl, herd.keys.alice, 'gpt-4.1', [
          ['e1', 'one'],
          ['e2', 'two'],
        ]);
        const ended = await until(
          () => client.batches.retrieve(batch.id),
          (b) => b.status !== 'in_progress' && b.status !== 'validating' && b.status !== 'finalizing',
        );
        // Its requests ran out of the window the policy leaves them (deadline.margin_ms): the batch ends expired, as OpenAI's.
        assert.equal(ended.status, 'expired');
        assert.equal(typeof ended.expired_at, 'number');
        assert.deepEqual(ended.request_counts, { total: 2, completed: 0, failed: 2 });
        assert.equal(ended.output_file_id, null);
        const errors = await readOutput(client, ended.error_file_id);
        assert.deepEqual(
          errors.map((l) => [l.custom_id, l.response, l.error?.code]),
          [
            ['e1', null, 'batch_expired'],
            ['e2', null, 'batch_expired'],
          ],
        );
        assert.deepEqual(upstream.requests, [], 'no request reached the upstream');
        assert.deepEqual(rowsOf(batch.id), [], 'an expired line costs nothing');
      });

      it('Anthropic: the requests end `expired`', async () => {
        const client = new Anthropic({ apiKey: herd.keys.bob, baseURL: herd.server.httpUrl, maxRetries: 0 });
        const created = await client.messages.batches.create({
          requests: [{ custom_id: 'late', params: { model: 'claude-sonnet-4-5', max_tokens: 20, messages: messagesOf('hi') } }],
        });
        const ended = await until(
          () => client.messages.batches.retrieve(created.id),
          (b) => b.processing_status === 'ended',
        );
        assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 1 });
        const results: [string, string][] = [];
        for await (const entry of await client.messages.batches.results(created.id)) results.push([entry.custom_id, entry.result.type]);
        assert.deepEqual(results, [['late', 'expired']]);
        assert.deepEqual(upstream.requests, []);
      });
    } else {
      it('the lines run realtime, not through the batch API, at the full realtime price', async () => {
        const { client, batch } = await submitChatBatch(herd.server.httpUrl, herd.keys.alice, 'gpt-4.1', [
          ['r1', 'one'],
          ['r2', 'two'],
        ]);
        const ended = await until(
          () => client.batches.retrieve(batch.id),
          (b) => b.status === 'completed',
        );
        assert.deepEqual(ended.request_counts, { total: 2, completed: 2, failed: 0 });
        const lines = await readOutput(client, ended.output_file_id);
        assert.deepEqual(
          lines.map((l) => [l.custom_id, l.response?.body.choices[0]?.message.content]),
          [
            ['r1', 'late but done'],
            ['r2', 'late but done'],
          ],
        );
        assert.deepEqual(
          upstream.requests.map((r) => `${r.method} ${r.url}`),
          ['POST /v1/chat/completions', 'POST /v1/chat/completions'],
          'realtime calls, no Files or Batch API',
        );
        const rows = await until(
          () => rowsOf(batch.id),
          (r) => r.length === 2,
        );
        for (const row of rows) {
          // gpt-4.1 realtime: 12 × 2 + 3 × 8 micro-dollars; the relay's ¥1 per list dollar: 48 micro-yuan.
          assert.deepEqual([row.list_usd_micros, row.realtime_list_usd_micros, row.cost_micros], [48, 48, 48], 'full price, nothing saved by batching');
        }
      });
    }
  });
}
