// Batches run to their end on a real Herd with its worker on, driven by the official SDKs: an OpenAI batch's
// output file read back with files.content, an Anthropic Message Batch's results with messages.batches.results;
// every line is one ledger row carrying the batch's id, and the batch's reservation is released at the end.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import Database from 'better-sqlite3';
import OpenAI, { toFile } from 'openai';
import { type BatchesHerd, startBatchesHerd } from './batches-herd.ts';

const chatLine = (customId: string, content: string) =>
  `${JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4.1', messages: [{ role: 'user', content }], max_tokens: 50 } })}\n`;

/** Polls until `done` holds (liveness, not speed: a batch that never ends fails after 20 s). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() - started < 20_000, `still not done: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('batches run by the worker', () => {
  let herd: BatchesHerd;
  let ledger: Database.Database;

  before(async () => {
    herd = await startBatchesHerd('herd-batches-run-', undefined, { worker: true });
    ledger = new Database(join(herd.dir, 'herd.db'), { readonly: true });
  });
  after(async () => {
    ledger?.close();
    await herd?.close();
  });

  const rowsOf = (batchId: string) =>
    until(
      async () => ledger.prepare('SELECT request_id, batch_id, status FROM ledger_requests WHERE batch_id = ? ORDER BY request_id').all(batchId) as { request_id: string }[],
      (rows) => rows.length > 0,
    );

  it('OpenAI: an uploaded file runs to completed; files.content gives one answer per line with its custom_id; one ledger row each', async () => {
    const client = new OpenAI({ apiKey: herd.keys.alice, baseURL: `${herd.server.httpUrl}/v1`, maxRetries: 0 });
    const file = await client.files.create({
      file: await toFile(Buffer.from(chatLine('q1', 'one') + chatLine('q2', 'two') + chatLine('q3', 'three')), 'in.jsonl'),
      purpose: 'batch',
    });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const ended = await until(
      () => client.batches.retrieve(created.id),
      (b) => b.status === 'completed',
    );
    assert.deepEqual(ended.request_counts, { total: 3, completed: 3, failed: 0 });
    assert.equal(typeof ended.completed_at, 'number');
    assert.equal(ended.error_file_id, null);
    assert.ok(ended.output_file_id);
    const text = await (await client.files.content(ended.output_file_id)).text();
    const lines = text
      .trim()
      .split('\n')
      .map(
        (l) => JSON.parse(l) as { id: string; custom_id: string; response: { status_code: number; request_id: string; body: { object: string; choices: unknown[] } }; error: null },
      );
    assert.deepEqual(
      lines.map((l) => [l.custom_id, l.response.status_code, l.response.body.object, l.error]),
      [
        ['q1', 200, 'chat.completion', null],
        ['q2', 200, 'chat.completion', null],
        ['q3', 200, 'chat.completion', null],
      ],
    );
    const outputFile = await client.files.retrieve(ended.output_file_id);
    assert.equal(outputFile.purpose, 'batch_output');
    const rows = await until(
      () => rowsOf(created.id),
      (r) => r.length === 3,
    );
    assert.deepEqual(rows.map((r) => r.request_id).sort(), lines.map((l) => l.response.request_id).sort(), "each output line's request id is its ledger row's");
  });

  it('Anthropic: a Message Batch runs to ended; results() gives each request its message', async () => {
    const client = new Anthropic({ apiKey: herd.keys.bob, baseURL: herd.server.httpUrl, maxRetries: 0 });
    const params = (content: string) => ({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user' as const, content }] });
    const created = await client.messages.batches.create({
      requests: [
        { custom_id: 'first', params: params('one') },
        { custom_id: 'second', params: params('two') },
      ],
    });
    const ended = await until(
      () => client.messages.batches.retrieve(created.id),
      (b) => b.processing_status === 'ended',
    );
    assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 2, errored: 0, canceled: 0, expired: 0 });
    assert.ok(ended.results_url?.endsWith(`/v1/messages/batches/${created.id}/results`));
    const results: { custom_id: string; type: string; role?: string }[] = [];
    for await (const entry of await client.messages.batches.results(created.id)) {
      results.push({ custom_id: entry.custom_id, type: entry.result.type, ...(entry.result.type === 'succeeded' ? { role: entry.result.message.role } : {}) });
    }
    assert.deepEqual(results, [
      { custom_id: 'first', type: 'succeeded', role: 'assistant' },
      { custom_id: 'second', type: 'succeeded', role: 'assistant' },
    ]);
    const rows = await until(
      () => rowsOf(created.id),
      (r) => r.length === 2,
    );
    assert.equal(rows.length, 2);
  });

  it('with batch.files.store: database the upload, the input lines and the output file live in the database', async () => {
    const other = await startBatchesHerd('herd-batches-dbfiles-', undefined, { worker: true, filesStore: 'database' });
    try {
      const client = new OpenAI({ apiKey: other.keys.alice, baseURL: `${other.server.httpUrl}/v1`, maxRetries: 0 });
      const file = await client.files.create({ file: await toFile(Buffer.from(chatLine('d1', 'one') + chatLine('d2', 'two')), 'in.jsonl'), purpose: 'batch' });
      const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const ended = await until(
        () => client.batches.retrieve(created.id),
        (b) => b.status === 'completed',
      );
      assert.ok(ended.output_file_id);
      const text = await (await client.files.content(ended.output_file_id)).text();
      assert.deepEqual(
        text
          .trim()
          .split('\n')
          .map((l) => (JSON.parse(l) as { custom_id: string }).custom_id),
        ['d1', 'd2'],
      );
      const db = new Database(join(other.dir, 'herd.db'), { readonly: true });
      const blobs = db.prepare('SELECT COUNT(*) AS n FROM batch_file_blobs WHERE complete = 1').get() as { n: number };
      db.close();
      assert.equal(blobs.n, 2, 'the input and the output file');
    } finally {
      await other.close();
    }
  });
});
