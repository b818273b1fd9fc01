// OpenAI's Batch API on a real Herd, driven by the official `openai` SDK: an uploaded file made a batch, retrieved,
// listed newest first with the SDK's cursor, cancelled; a file with invalid lines is a 200 `failed` batch naming the
// lines; a batch that does not fit the key's budget is refused at creation; one key never sees another's batches.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { BATCH_MASTER, type BatchesHerd, startBatchesHerd } from './batches-herd.ts';

const line = (customId: string, body: Record<string, unknown> = {}, url = '/v1/chat/completions') =>
  `${JSON.stringify({ custom_id: customId, method: 'POST', url, body: { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hello' }], max_tokens: 50, ...body } })}\n`;

describe('OpenAI Batch API', () => {
  let herd: BatchesHerd;
  let alice: OpenAI;
  let bob: OpenAI;
  let master: OpenAI;

  const clientOf = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${herd.server.httpUrl}/v1`, maxRetries: 0 });
  const upload = async (client: OpenAI, text: string) => (await client.files.create({ file: await toFile(Buffer.from(text), 'requests.jsonl'), purpose: 'batch' })).id;

  before(async () => {
    herd = await startBatchesHerd('herd-openai-batches-');
    alice = clientOf(herd.keys.alice);
    bob = clientOf(herd.keys.bob);
    master = clientOf(BATCH_MASTER);
  });
  after(async () => {
    await herd?.close();
  });

  it('creates a batch from an uploaded file and answers it as OpenAI does: retrieve and cancel', async () => {
    const fileId = await upload(alice, line('a') + line('b') + line('c'));
    const batch = await alice.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    assert.match(batch.id, /^batch_[A-Za-z0-9]{24}$/);
    assert.equal(batch.object, 'batch');
    assert.equal(batch.endpoint, '/v1/chat/completions');
    assert.equal(batch.input_file_id, fileId);
    assert.equal(batch.completion_window, '24h');
    assert.equal(batch.status, 'in_progress');
    assert.equal(batch.errors, null);
    assert.equal(batch.output_file_id, null);
    assert.equal(batch.error_file_id, null);
    assert.ok(Math.abs(batch.created_at - Date.now() / 1000) < 60);
    assert.equal(batch.expires_at, batch.created_at + 86_400);
    assert.equal(typeof batch.in_progress_at, 'number');
    for (const field of ['finalizing_at', 'completed_at', 'failed_at', 'expired_at', 'cancelling_at', 'cancelled_at'] as const) assert.equal(batch[field], null, field);
    assert.deepEqual(batch.request_counts, { total: 3, completed: 0, failed: 0 });
    assert.deepEqual(batch.metadata, { job: 'nightly' });
    assert.deepEqual(await alice.batches.retrieve(batch.id), batch);

    const cancelling = await alice.batches.cancel(batch.id);
    assert.equal(cancelling.status, 'cancelling');
    assert.equal(typeof cancelling.cancelling_at, 'number');
    assert.deepEqual(cancelling.request_counts, { total: 3, completed: 0, failed: 3 }, 'lines never sent are cancelled at once (failed, as OpenAI counts them)');
    assert.equal((await alice.batches.retrieve(batch.id)).status, 'cancelling', 'the worker moves it to cancelled; it is off here');
    assert.equal((await alice.batches.cancel(batch.id)).status, 'cancelling', 'cancelling twice answers the batch again');
  });

  it('answers a file with invalid lines with a 200 failed batch whose errors name each line', async () => {
    const text = `${line('ok')}${line('wrong-url', {}, '/v1/embeddings')}{not json\n${line('ok')}`;
    const batch = await alice.batches.create({ input_file_id: await upload(alice, text), endpoint: '/v1/chat/completions', completion_window: '24h' });
    assert.equal(batch.status, 'failed');
    assert.equal(typeof batch.failed_at, 'number');
    assert.equal(batch.errors?.object, 'list');
    const errors = batch.errors?.data ?? [];
    assert.deepEqual(
      errors.map((e) => [e.line, e.code]),
      [
        [2, 'invalid_url'],
        [3, 'invalid_json_line'],
        [4, 'duplicate_custom_id'],
      ],
    );
    assert.equal(errors[0]?.param, 'url');
    assert.deepEqual(batch.request_counts, { total: 4, completed: 0, failed: 3 });
    assert.equal((await alice.batches.retrieve(batch.id)).status, 'failed', 'OpenAI keeps a failed batch');
  });

  it("refuses OpenAI's way a missing file, a wrong endpoint or window, and metadata over its bounds", async () => {
    const fileId = await upload(alice, line('a'));
    await assert.rejects(
      alice.batches.create({ input_file_id: 'file-nope', endpoint: '/v1/chat/completions', completion_window: '24h' }),
      (err: unknown) => err instanceof OpenAI.NotFoundError && err.param === 'input_file_id',
    );
    await assert.rejects(
      alice.batches.create({ input_file_id: fileId, endpoint: '/v1/images' as '/v1/chat/completions', completion_window: '24h' }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'endpoint',
    );
    await assert.rejects(
      alice.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '1h' as '24h' }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'completion_window',
    );
    const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    await assert.rejects(
      alice.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: tooMany }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'metadata',
    );
    await assert.rejects(
      alice.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { note: 'x'.repeat(513) } }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'metadata.note',
    );
    const missing = await fetch(`${herd.server.httpUrl}/v1/batches`, {
      method: 'POST',
      headers: { authorization: `Bearer ${herd.keys.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpoint: '/v1/chat/completions', completion_window: '24h', an_unknown_field: 1 }),
    });
    assert.equal(missing.status, 400);
    assert.deepEqual(((await missing.json()) as { error: unknown }).error, {
      message: "'input_file_id' is a required property",
      type: 'invalid_request_error',
      param: 'input_file_id',
      code: null,
    });
    assert.equal((await fetch(`${herd.server.httpUrl}/v1/batches`)).status, 401);
    assert.equal((await fetch(`${herd.server.httpUrl}/v1/batches/x/cancel`, { headers: { authorization: `Bearer ${herd.keys.alice}` } })).status, 405);
  });

  it("refuses at creation a batch whose maximum cost does not fit the key's budget", async () => {
    const frugal = clientOf(herd.keys.frugal);
    const fileId = await upload(frugal, line('a', { max_tokens: 1000 }) + line('b', { max_tokens: 1000 }));
    await assert.rejects(
      frugal.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' }),
      (err: unknown) => err instanceof OpenAI.RateLimitError && err.code === 'insufficient_quota' && /line 1/.test(err.message),
    );
    assert.deepEqual((await frugal.batches.list()).data, [], 'nothing is kept of a batch refused for its budget');
  });

  it("lists a key's batches newest first through the SDK's cursor; another key sees none of them, the master key all", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const fileId = await upload(bob, line(`r${i}`));
      ids.push((await bob.batches.create({ input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' })).id);
    }
    const first = await bob.batches.list({ limit: 2 });
    assert.deepEqual(
      first.data.map((b) => b.id),
      [ids[2], ids[1]],
    );
    assert.equal(first.has_more, true);
    const seen: string[] = [];
    for await (const batch of bob.batches.list({ limit: 2 })) seen.push(batch.id);
    assert.deepEqual(seen, [...ids].reverse());

    const aliceSees: string[] = [];
    for await (const batch of alice.batches.list()) aliceSees.push(batch.id);
    assert.deepEqual(
      aliceSees.filter((id) => ids.includes(id)),
      [],
    );
    const id = ids[0] as string;
    await assert.rejects(alice.batches.retrieve(id), (err: unknown) => err instanceof OpenAI.NotFoundError && /No batch found/.test(err.message));
    await assert.rejects(alice.batches.cancel(id), OpenAI.NotFoundError);
    assert.equal((await bob.batches.retrieve(id)).status, 'in_progress', "another key's cancel did nothing");
    assert.equal((await master.batches.retrieve(id)).id, id);
    const masterSees: string[] = [];
    for await (const batch of master.batches.list({ limit: 100 })) masterSees.push(batch.id);
    assert.deepEqual(
      ids.filter((i) => !masterSees.includes(i)),
      [],
    );
    await assert.rejects(bob.batches.list({ limit: 101 }), (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'limit');
  });
});
