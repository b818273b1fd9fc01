// The fake OpenAI batch upstream (test/helpers/fake-openai-batches.ts) driven by the official `openai` SDK:
// files.create/retrieve/content/delete and batches.create/retrieve/list/cancel read what it says as
// they read OpenAI, so the fake is proven to speak the wire format Herd's client is tested against.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { fakePromptText, fakeTokens } from '../../../helpers/fake-batch-answers.ts';
import { FakeOpenAIBatches } from '../../../helpers/fake-openai-batches.ts';

const KEY = 'sk-fake-openai-batches';

/** One line of an output or error file, as OpenAI documents it. */
interface OutputLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: { usage: { prompt_tokens: number }; error: { type: string } } } | null;
  error: { code: string; message: string } | null;
}

function jsonl(customIds: string[]): string {
  return customIds
    .map((id) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: `hi ${id}` }] } }))
    .join('\n');
}

describe('fake OpenAI batch upstream, through the openai SDK', () => {
  let fake: FakeOpenAIBatches;
  let sdk: OpenAI;

  before(async () => {
    fake = await FakeOpenAIBatches.start({ apiKey: KEY });
    sdk = new OpenAI({ apiKey: KEY, baseURL: fake.baseUrl, maxRetries: 0 });
  });
  after(() => fake.close());

  async function upload(customIds: string[]): Promise<string> {
    const file = await sdk.files.create({ file: await toFile(Buffer.from(jsonl(customIds)), 'requests.jsonl'), purpose: 'batch' });
    return file.id;
  }

  it('uploads, creates, moves validating → in_progress → finalizing → completed, and serves the output file', async () => {
    const file = await sdk.files.create({ file: await toFile(Buffer.from(jsonl(['a', 'b'])), 'requests.jsonl'), purpose: 'batch' });
    assert.deepEqual([file.object, file.purpose, file.filename, file.bytes], ['file', 'batch', 'requests.jsonl', jsonl(['a', 'b']).length]);
    assert.equal((await sdk.files.retrieve(file.id)).id, file.id);
    const batch = await sdk.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    assert.deepEqual([batch.object, batch.status, batch.metadata], ['batch', 'validating', { job: 'nightly' }]);
    const seen = [];
    for (;;) {
      const current = await sdk.batches.retrieve(batch.id);
      seen.push(current.status);
      if (current.status === 'completed') {
        assert.deepEqual(current.request_counts, { total: 2, completed: 2, failed: 0 });
        assert.equal(current.error_file_id, null);
        const text = await (await sdk.files.content(current.output_file_id!)).text();
        const lines = text
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as OutputLine);
        assert.deepEqual(
          lines.map((l) => l.custom_id),
          ['a', 'b'],
        );
        const body = { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'hi a' }] };
        assert.equal(lines[0]!.response?.status_code, 200);
        assert.equal(lines[0]!.response?.body.usage.prompt_tokens, fakeTokens(fakePromptText(body)));
        assert.equal(lines[0]!.error, null);
        break;
      }
      fake.advance(batch.id);
    }
    assert.deepEqual(seen, ['validating', 'in_progress', 'finalizing', 'completed']);
    assert.deepEqual(await sdk.files.delete(file.id), { id: file.id, object: 'file', deleted: true });
  });

  it('splits chosen failures into the error file', async () => {
    fake.failLines(['bad'], 400);
    const batch = await sdk.batches.create({ input_file_id: await upload(['good', 'bad']), endpoint: '/v1/chat/completions', completion_window: '24h' });
    fake.runToEnd(batch.id);
    const done = await sdk.batches.retrieve(batch.id);
    assert.deepEqual(done.request_counts, { total: 2, completed: 1, failed: 1 });
    const errors = (await (await sdk.files.content(done.error_file_id!)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as OutputLine);
    assert.deepEqual([errors[0]!.custom_id, errors[0]!.response?.status_code, errors[0]!.response?.body.error.type], ['bad', 400, 'invalid_request_error']);
  });

  it('cancels (cancelling → cancelled) and expires, unanswered lines carrying batch_cancelled / batch_expired', async () => {
    const cancelled = await sdk.batches.create({ input_file_id: await upload(['c1', 'c2']), endpoint: '/v1/chat/completions', completion_window: '24h' });
    fake.advance(cancelled.id);
    fake.progress(cancelled.id, 1);
    assert.equal((await sdk.batches.cancel(cancelled.id)).status, 'cancelling');
    fake.advance(cancelled.id);
    const afterCancel = await sdk.batches.retrieve(cancelled.id);
    assert.equal(afterCancel.status, 'cancelled');
    assert.ok(afterCancel.cancelled_at !== undefined && afterCancel.cancelling_at !== undefined);
    const cancelLine = JSON.parse((await (await sdk.files.content(afterCancel.error_file_id!)).text()).trim()) as OutputLine;
    assert.deepEqual([cancelLine.custom_id, cancelLine.response, cancelLine.error?.code], ['c2', null, 'batch_cancelled']);

    const expired = await sdk.batches.create({ input_file_id: await upload(['e1']), endpoint: '/v1/chat/completions', completion_window: '24h' });
    fake.expire(expired.id);
    const afterExpiry = await sdk.batches.retrieve(expired.id);
    assert.deepEqual([afterExpiry.status, afterExpiry.output_file_id], ['expired', null]);
    assert.match(await (await sdk.files.content(afterExpiry.error_file_id!)).text(), /"code":"batch_expired"/);
  });

  it('fails validation with OpenAI-shaped errors, and refuses a bad create as OpenAI does', async () => {
    const batch = await sdk.batches.create({ input_file_id: await upload(['x', 'x']), endpoint: '/v1/chat/completions', completion_window: '24h' });
    fake.advance(batch.id);
    const failed = await sdk.batches.retrieve(batch.id);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(
      failed.errors?.data?.map((e) => [e.code, e.line]),
      [['duplicate_custom_id', 2]],
    );
    const refused = await sdk.batches.create({ input_file_id: 'file-missing', endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((err: unknown) => err);
    assert.ok(refused instanceof OpenAI.BadRequestError);
    assert.equal(refused.param, 'input_file_id');
  });

  it('pages the batch list with after/limit, newest first', async () => {
    const ids = [...fake.batches.keys()].reverse();
    const listed: string[] = [];
    for await (const batch of sdk.batches.list({ limit: 2 })) listed.push(batch.id);
    assert.deepEqual(listed, ids);
    const first = await sdk.batches.list({ limit: 2 });
    assert.equal(first.has_more, ids.length > 2);
    assert.equal(fake.calls.filter((c) => c.path.startsWith('/v1/batches?')).length, Math.ceil(ids.length / 2) + 1);
  });

  it('answers 429 with retry-after on create when told to, as a RateLimitError', async () => {
    fake.rejectCreates(1, 5);
    const error = await sdk.batches.create({ input_file_id: await upload(['r']), endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((err: unknown) => err);
    assert.ok(error instanceof OpenAI.RateLimitError);
    assert.equal(error.headers?.get('retry-after'), '5');
  });

  it('has the fields of the documented batch object (test/fixtures/openai/batch.json)', async () => {
    const documented = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../../fixtures/openai/batch.json'), 'utf8')) as Record<string, unknown>;
    const batch = await sdk.batches.create({ input_file_id: await upload(['f']), endpoint: '/v1/chat/completions', completion_window: '24h' });
    for (const field of Object.keys(documented)) assert.ok(field in batch, `fake batch has ${field}`);
  });

  it('moves batches on its own when started with a tick', async () => {
    const ticking = await FakeOpenAIBatches.start({ tickMs: 2 });
    try {
      const client = new OpenAI({ apiKey: 'any', baseURL: ticking.baseUrl, maxRetries: 0 });
      const file = await client.files.create({ file: await toFile(Buffer.from(jsonl(['t'])), 'tick.jsonl'), purpose: 'batch' });
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      let status = batch.status;
      for (let i = 0; i < 500 && status !== 'completed'; i++) {
        await sleep(2);
        status = (await client.batches.retrieve(batch.id)).status;
      }
      assert.equal(status, 'completed');
    } finally {
      await ticking.close();
    }
  });
});
