// Submission's streaming validation of a batch file against the real catalog, ingress decoders and prices:
// a good file (offsets that read the line back, costs as the realtime reservation prices them), each refusal
// with its line number, chunk cuts inside lines and inside UTF-8 characters, and a 100,000-line file whose
// live heap stays far below its size.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { HerdError } from '../../../src/core/errors.ts';
import { validateBatchFile } from '../../../src/gateway/batch/validate-batch-file.ts';
import { choosePromptCount } from '../../../src/gateway/batch/validate-batch-line.ts';
import { chatCodec } from '../../../src/gateway/ingress/openai-chat/chat-codec.ts';
import { PromptTokenEstimate } from '../../../src/gateway/router/prompt-token-estimate.ts';
import { resolveRoute } from '../../../src/gateway/router/resolve-route.ts';
import { chatBody, cutAt, inChunks, key, openaiLine, openFixture, runValidation, type Fixture, AT_MS } from './batch-validate-fixtures.ts';
import { readJsonlLines } from '../../../src/gateway/wire/jsonl-line-source.ts';

const source = (text: string | Buffer) => inChunks(Buffer.isBuffer(text) ? text : Buffer.from(text), 1 << 16);

describe('validateBatchFile (OpenAI JSONL)', () => {
  let fixture: Fixture;
  before(async () => {
    fixture = await openFixture();
  });
  after(() => fixture.close());

  /** What the realtime reservation holds for a chat body (admit-flight.ts: dearest deployment, prompt + max answer). */
  async function realtimeMax(body: ReturnType<typeof chatBody>, maxCompletionTokens: number): Promise<number> {
    const prompt = new PromptTokenEstimate(chatCodec.decode(body, {}).request);
    const route = await resolveRoute(fixture.catalog, body.model, prompt);
    return fixture.billing.estimateForModel({ model: route.model, promptTokens: await prompt.exact(), maxCompletionTokens, atMs: AT_MS });
  }

  it('passes a good file: CRLF, blank lines and a last line without \\n; offsets read each line back; costs as realtime', async () => {
    const bodies = [
      chatBody('Say hi.', 'gpt-4.1', { max_tokens: 20 }),
      chatBody('Summarise: é 日本 🎉', 'gpt4'),
      chatBody('Translate.', 'fast', { max_completion_tokens: 5, extra_field: true }),
    ];
    const lines = bodies.map((b, i) => openaiLine(`req-${i}`, b));
    const text = `${lines[0]}\r\n\n   \r\n${lines[1]}\n${lines[2]}`;
    const bytes = Buffer.from(text);
    const { result, lines: valid } = await runValidation(fixture, source(bytes));
    assert.deepEqual(result.errors, []);
    assert.equal(result.ok, true);
    assert.deepEqual([result.total, result.valid, result.failed], [3, 3, 0]);
    assert.deepEqual(
      valid.map((l) => [l.lineNo, l.customId, l.model]),
      [
        [1, 'req-0', 'gpt-4.1'],
        [4, 'req-1', 'gpt-4.1'],
        [5, 'req-2', 'gpt-4.1'],
      ],
    );
    for (const [i, line] of valid.entries()) {
      assert.equal(bytes.subarray(line.byteOffset, line.byteOffset + line.byteLength).toString('utf8'), lines[i]);
    }
    // No max_tokens: the model's max_output_tokens (1000), as the realtime reservation assumes.
    const expected = [await realtimeMax(bodies[0]!, 20), await realtimeMax(bodies[1]!, 1000), await realtimeMax(bodies[2]!, 5)];
    assert.deepEqual(
      valid.map((l) => l.maxCostMicros),
      expected,
    );
    assert.equal(result.totalMaxCostMicros, expected[0]! + expected[1]! + expected[2]!);
    assert.ok(expected.every((m) => m > 0));
  });

  it('refuses a duplicate custom_id, naming the line that used it first', async () => {
    const text = [openaiLine('a', chatBody('1')), openaiLine('b', chatBody('2')), openaiLine('a', chatBody('3'))].join('\n');
    const { result } = await runValidation(fixture, source(text));
    assert.equal(result.ok, false);
    assert.deepEqual(result.errors, [
      { code: 'duplicate_custom_id', message: 'The custom_id "a" is already used on line 1: each request\'s custom_id must be unique.', param: 'custom_id', line: 3 },
    ]);
  });

  it("refuses a url other than the batch's endpoint, a method other than POST, and missing fields", async () => {
    const text = [
      openaiLine('a', chatBody('1'), { url: '/v1/embeddings' }),
      openaiLine('b', chatBody('2'), { method: 'GET' }),
      JSON.stringify({ custom_id: 'c', method: 'POST', url: '/v1/chat/completions' }),
      JSON.stringify({ method: 'POST', url: '/v1/chat/completions', body: chatBody('4') }),
      openaiLine('e', chatBody('5')),
    ].join('\n');
    const { result, lines } = await runValidation(fixture, source(text));
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.code, e.param]),
      [
        [1, 'invalid_url', 'url'],
        [2, 'invalid_method', 'method'],
        [3, 'missing_required_parameter', 'body'],
        [4, 'missing_required_parameter', 'custom_id'],
      ],
    );
    assert.match(result.errors[0]!.message, /\/v1\/embeddings.*\/v1\/chat\/completions/);
    assert.equal(result.valid, 1);
    // The batch is refused whole: the sink got nothing after the first failure.
    assert.deepEqual(lines, []);
  });

  it('refuses bad JSON, a non-object line and a too deeply nested line with their line numbers', async () => {
    const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
    const text = [openaiLine('a', chatBody('1')), '{"custom_id": "b",', '[1, 2]', deep, openaiLine('e', chatBody('5'))].join('\n');
    const { result } = await runValidation(fixture, source(text));
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.code]),
      [
        [2, 'invalid_json_line'],
        [3, 'invalid_json_line'],
        [4, 'invalid_json_line'],
      ],
    );
    assert.match(result.errors[0]!.message, /not parseable as valid JSON/);
    assert.match(result.errors[1]!.message, /must be a JSON object, not an array/);
    assert.match(result.errors[2]!.message, /deeper than 128/);
  });

  it("refuses a model the key may not use, an unknown model, a body the endpoint's codec refuses; unknown fields pass", async () => {
    const text = [
      openaiLine('a', chatBody('1', 'claude-sonnet-4.5')),
      openaiLine('b', chatBody('2', 'no-such-model')),
      openaiLine('c', { model: 'gpt-4.1', messages: 'not a list' }),
      openaiLine('d', chatBody('4', 'emb')),
      openaiLine('e', chatBody('5', 'gpt-4.1', { a_new_openai_field: { x: 1 } }), { another_top_level: 1 }),
    ].join('\n');
    const { result } = await runValidation(fixture, source(text), { key: key({ allowedModels: ['gpt-4.1', 'emb'] }) });
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.code, e.param]),
      [
        [1, 'model_not_allowed', 'body.model'],
        [2, 'model_not_found', 'body.model'],
        [3, 'invalid_request', 'body.messages'],
        [4, 'invalid_request', 'body.model'],
      ],
    );
    assert.match(result.errors[0]!.message, /not allowed for this key/);
    assert.match(result.errors[3]!.message, /embedding model: use POST \/v1\/embeddings/);
    assert.equal(result.valid, 1);
  });

  it('gives the same lines and offsets whatever the chunks: cuts inside lines, inside \\r\\n and inside multi-byte characters', async () => {
    const lines = [openaiLine('é-1', chatBody('naïve café 日本語 🎉🎉')), openaiLine('b', chatBody('ü'.repeat(40))), openaiLine('c', chatBody('𝄞 clef'))];
    const bytes = Buffer.from(`\uFEFF${lines[0]}\r\n${lines[1]}\r\n\r\n${lines[2]}\r\n`);
    const whole = await runValidation(fixture, source(bytes));
    assert.equal(whole.result.ok, true);
    assert.equal(whole.lines.length, 3);
    for (const line of whole.lines) JSON.parse(bytes.subarray(line.byteOffset, line.byteOffset + line.byteLength).toString('utf8'));
    // Every cut inside a multi-byte character (a continuation byte), inside \r\n, and 1-byte chunks.
    const cuts = [...bytes.keys()].filter((i) => i > 0 && ((bytes[i]! & 0xc0) === 0x80 || bytes[i] === 0x0a));
    assert.ok(cuts.length > 50);
    for (const cut of cuts) {
      const split = await runValidation(fixture, cutAt(bytes, [cut]));
      assert.deepEqual(split.lines, whole.lines, `cut at byte ${cut}`);
    }
    const bytewise = await runValidation(fixture, inChunks(bytes, 1));
    assert.deepEqual(bytewise.lines, whole.lines);
    assert.deepEqual(bytewise.result, whole.result);
  });

  it('refuses a line over the length limit without holding it, and the rest still validates', async () => {
    const long = openaiLine('long', chatBody('x'.repeat(5000)));
    const text = [openaiLine('a', chatBody('1')), long, openaiLine('c', chatBody('3'))].join('\n');
    const { result } = await runValidation(fixture, inChunks(Buffer.from(text), 100), { maxLineBytes: 1000 });
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.code]),
      [[2, 'line_too_long']],
    );
    assert.match(result.errors[0]!.message, new RegExp(`${Buffer.byteLength(long)} bytes`));
    assert.equal(result.valid, 2);
  });

  it('reports the first 100 errors but counts them all; an empty file; too many requests; the line that passes the budget', async () => {
    const text = Array.from({ length: 150 }, (_, i) => `{"custom_id": "x${i}"`).join('\n');
    const many = await runValidation(fixture, source(text));
    assert.equal(many.result.errors.length, 100);
    assert.equal(many.result.failed, 150);
    assert.equal(many.result.errors[99]!.line, 100);

    const empty = await runValidation(fixture, source('\n\n  \n'));
    assert.deepEqual(empty.result.errors, [{ code: 'empty_file', message: 'The batch holds no requests.', param: null }]);
    assert.equal(empty.result.ok, false);

    const four = Array.from({ length: 4 }, (_, i) => openaiLine(`r${i}`, chatBody('hello', 'gpt-4.1', { max_tokens: 100 }))).join('\n');
    const capped = await runValidation(fixture, source(four), { maxRequests: 3 });
    assert.deepEqual(
      capped.result.errors.map((e) => e.code),
      ['batch_too_large'],
    );

    const { result } = await runValidation(fixture, source(four));
    const each = result.totalMaxCostMicros / 4;
    const budget = await runValidation(fixture, source(four), { costLimitMicros: each * 2 + 1 });
    assert.equal(budget.result.ok, true);
    assert.equal(budget.result.overLimitAtLine, 3);
  });

  it('checks an embeddings batch with its own decoder: no output tokens, dimensions refused for a fixed-length model', async () => {
    const line = (id: string, body: Record<string, unknown>) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/embeddings', body });
    const text = [
      line('a', { model: 'emb', input: ['one two', 'three'] }),
      line('b', { model: 'emb', input: 'x', dimensions: 8 }),
      line('c', { model: 'gpt-4.1', input: 'x' }),
    ].join('\n');
    const { result } = await runValidation(fixture, source(text), { endpoint: '/v1/embeddings' });
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.code, e.param]),
      [
        [2, 'unsupported_parameter', 'body.dimensions'],
        [3, 'invalid_request', 'body.model'],
      ],
    );
    const model = fixture.catalog.findModel('emb')!;
    const prompt = await new PromptTokenEstimate(['one two', 'three']).exact();
    assert.equal(result.totalMaxCostMicros, fixture.billing.estimateForModel({ model, promptTokens: prompt, maxCompletionTokens: 0, atMs: AT_MS }));
  });

  it('tokenizes prompts only for a key or team with a budget, as admission does', () => {
    assert.equal(choosePromptCount(key()), 'upper-bound');
    assert.equal(choosePromptCount(key({ budgets: [{ period: 'day', amountMicros: 1_000_000 }] })), 'exact');
  });

  it("passes Herd's own failures through instead of blaming the line", async () => {
    const records = readJsonlLines(source(openaiLine('a', chatBody('1'))), { maxLineBytes: 1000 });
    const broken = validateBatchFile({
      records,
      format: 'openai',
      endpoint: '/v1/chat/completions',
      key: key(),
      checkBody: async () => {
        throw new HerdError('INTERNAL', 'the tokenizer broke');
      },
    });
    await assert.rejects(broken, /the tokenizer broke/);
  });

  it('validates 100,000 lines with a live heap far below the file size', async () => {
    const gc = exposeGc();
    const review = 'The parcel arrived on time, the product works as described and the battery lasts all day. '.repeat(2);
    const template = openaiLine('ID', chatBody(`Classify the sentiment of this review as positive, neutral or negative: ${review}`, 'gpt-4.1', { max_tokens: 5 }));
    const [head, tail] = template.split('"ID"') as [string, string];
    const count = 100_000;
    let fileBytes = 0;
    async function* file(): AsyncGenerator<Buffer> {
      let lines: string[] = [];
      for (let i = 0; i < count; i++) {
        lines.push(`${head}"req-${i}"${tail}`);
        if (lines.length === 250) {
          const chunk = Buffer.from(`${lines.join('\n')}\n`);
          fileBytes += chunk.length;
          yield chunk;
          lines = [];
        }
      }
    }
    gc();
    const baseline = liveBytes();
    let peak = 0;
    let seen = 0;
    const started = performance.now();
    const { result } = await runValidation(fixture, file(), {
      promptCount: 'upper-bound',
      onLine: () => {
        seen += 1;
        if (seen % 20_000 === 0) {
          gc();
          peak = Math.max(peak, liveBytes() - baseline);
        }
      },
    });
    const seconds = (performance.now() - started) / 1000;
    assert.equal(result.ok, true);
    assert.equal(result.total, count);
    assert.equal(seen, count);
    // The custom_id table (5 words a slot, at most half full: ~5 MB here) is most of what stays; the file is ~40 MB.
    assert.ok(fileBytes > 30_000_000, `file of ${fileBytes} bytes`);
    assert.ok(peak < fileBytes / 4, `live heap grew ${peak} bytes for a ${fileBytes}-byte file`);
    console.log(`# 100k lines: ${fileBytes} bytes, ${(count / seconds).toFixed(0)} lines/s (GCs included), live heap +${(peak / 1e6).toFixed(1)} MB`);
  });
});

/** The V8 gc() a test can call without --expose-gc on the command line. */
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Heap plus array buffers: the custom_id table's typed array lives outside the JS heap. */
function liveBytes(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}
