// The `type: triton` provider end to end with the official openai SDK: a Herd whose gateway routes to
// its own repository's JS text models in process (plain and decoupled), falls back from a model that is
// not loaded to a fake OpenAI upstream, records zero-priced ledger rows, refuses a model without
// text_input, and reaches the same models on a second Herd (remote mode, generate and infer).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { pause, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { startFakeUpstream } from '../serving/llm/llm-fixtures.ts';
import { EXAMPLE_REPOSITORY, startTestServer } from './start-test-server.ts';

const FIXTURES = resolve('test/fixtures/triton_provider_repository');

describe('type: triton provider', () => {
  let remote: HerdServer;
  let server: HerdServer;
  let upstream: MockUpstream;
  let client: OpenAI;
  let ledgerPath: string;
  const logs: string[] = [];

  before(async () => {
    // The remote server: serving only (no gateway), the same models.
    remote = await startTestServer({ repositories: [FIXTURES, EXAMPLE_REPOSITORY], controlMode: 'explicit', loadModel: ['echo_llm', 'echo_text', 'echo_plain'] });
    upstream = await startFakeUpstream();
    const dir = mkdtempSync(join(tmpdir(), 'herd-triton-e2e-'));
    ledgerPath = join(dir, 'ledger.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving: { model_repository: ["${FIXTURES}", "${EXAMPLE_REPOSITORY}"], model_control_mode: explicit, load_model: [echo_llm, echo_text, echo_plain, no_text, tiny_embed, slow_words] }
auth: { db: "${join(dir, 'keys.db')}" }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:${ledgerPath}", flush_interval_ms: 50 }
providers:
  local: { type: triton, timeout_ms: 5000, retry: { attempts: 1 } }
  remote: { type: triton, base_url: "${remote.httpUrl}", timeout_ms: 5000, retry: { attempts: 1 } }
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: FAKE_RELAY_KEY, exchange_rate: 1.0, timeout_ms: 5000, retry: { attempts: 1 } }
models:
  local-echo: { deployments: [{ provider: local, upstream_model: echo_llm }] }
  local-text: { price: { input: 0, output: 0 }, deployments: [{ provider: local, upstream_model: "echo_text:1" }] }
  local-plain: { deployments: [{ provider: local, upstream_model: echo_plain }] }
  local-chatml: { deployments: [{ provider: local, upstream_model: echo_text, prompt_template: chatml }] }
  local-missing: { deployments: [{ provider: local, upstream_model: not_loaded }], fallbacks: [hosted] }
  local-bad: { deployments: [{ provider: local, upstream_model: no_text }] }
  local-slow: { deployments: [{ provider: local, upstream_model: slow_words }] }
  remote-echo: { deployments: [{ provider: remote, upstream_model: echo_llm }] }
  remote-text: { deployments: [{ provider: remote, upstream_model: echo_text }] }
  hosted: { price: { input: 1, output: 2 }, deployments: [{ provider: relay, upstream_model: hosted-up }] }
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: { FAKE_RELAY_KEY: 'sk-fake' }, log: (line) => logs.push(line) });
    client = new OpenAI({ apiKey: 'unused', baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await server?.close();
    await remote?.close();
    await upstream?.close();
  });

  const ledgerRows = async (count: number): Promise<Record<string, unknown>[]> => {
    for (let i = 0; i < 200; i++) {
      if (existsSync(ledgerPath)) {
        const db = new Database(ledgerPath, { readonly: true });
        try {
          const rows = db.prepare('SELECT * FROM ledger_requests ORDER BY started_at').all() as Record<string, unknown>[];
          if (rows.length >= count) return rows;
        } finally {
          db.close();
        }
      }
      await pause(25);
    }
    throw new Error(`the ledger never reached ${count} rows`);
  };

  it('warns at start-up about the deployments that cannot answer', () => {
    assert.ok(
      logs.some((l) => l.includes("deployment local/not_loaded: Triton model 'not_loaded' is not loaded")),
      logs.join('\n'),
    );
    assert.ok(
      logs.some((l) => l.includes("model 'no_text' cannot serve chat")),
      logs.join('\n'),
    );
  });

  it('answers a chat completion from an in-process model, with its own counts and finish reason', async () => {
    const completion = await client.chat.completions.create({ model: 'local-text', messages: [{ role: 'user', content: 'hello big world' }] });
    assert.equal(completion.choices[0]?.message.content, 'echo: hello big world');
    assert.equal(completion.choices[0]?.finish_reason, 'stop');
    assert.equal(completion.model, 'local-text');
    assert.deepEqual({ prompt: completion.usage?.prompt_tokens, completion: completion.usage?.completion_tokens }, { prompt: 3, completion: 4 });
    const capped = await client.chat.completions.create({ model: 'local-text', max_tokens: 2, messages: [{ role: 'user', content: 'hello big world' }] });
    assert.equal(capped.choices[0]?.message.content, 'echo: hello');
    assert.equal(capped.choices[0]?.finish_reason, 'length');
  });

  it('streams a decoupled model response by response, and answers it whole without stream', async () => {
    const stream = await client.chat.completions.create({
      model: 'local-echo',
      stream: true,
      stream_options: { include_usage: true },
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'one two three' },
      ],
    });
    const deltas: string[] = [];
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas.push(choice.delta.content);
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
    // echo_llm's prompt_template parameter is raw: the messages' text, a blank line apart.
    assert.deepEqual(deltas, ['echo:', ' be', ' brief', '\n\none', ' two', ' three']);
    assert.equal(finish, 'stop');
    assert.equal(usage?.completion_tokens, 6);
    assert.equal(usage?.prompt_tokens, 5);

    const whole = await client.chat.completions.create({ model: 'local-echo', messages: [{ role: 'user', content: 'one two three' }] });
    assert.equal(whole.choices[0]?.message.content, 'echo: one two three');
  });

  it('renders the default plain template and a deployment override, and estimates usage a model does not report', async () => {
    const plain = await client.chat.completions.create({
      model: 'local-plain',
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'yo' },
        { role: 'user', content: 'again' },
      ],
    });
    assert.equal(plain.choices[0]?.message.content, 'echo: S\n\nUser: hi\nAssistant: yo\nUser: again\nAssistant:');
    assert.ok((plain.usage?.prompt_tokens ?? 0) > 0);
    const chatml = await client.chat.completions.create({ model: 'local-chatml', messages: [{ role: 'user', content: 'hi' }] });
    // (echo_llm answers whole words: the template's trailing newline is not echoed.)
    assert.equal(chatml.choices[0]?.message.content, 'echo: <|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant');
    // A model that is not decoupled streams its one answer as one chunk.
    const stream = await client.chat.completions.create({ model: 'local-plain', stream: true, messages: [{ role: 'user', content: 'x' }] });
    const deltas: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
    assert.deepEqual(deltas, ['echo: User: x\nAssistant:']);
  });

  it('falls back from a model that is not loaded to a hosted upstream', async () => {
    const raw = await client.chat.completions.create({ model: 'local-missing', messages: [{ role: 'user', content: 'hello' }] }).withResponse();
    assert.equal(raw.data.choices[0]?.message.content, 'echo(hosted-up): hello');
    assert.equal(raw.response.headers.get('x-herd-model'), 'hosted');
    assert.equal(raw.response.headers.get('x-herd-attempts'), '2');
    // Streamed too: the failure comes before the first chunk, so the next model may still answer.
    const stream = await client.chat.completions.create({ model: 'local-missing', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'echo(hosted-up): hi');
  });

  it('refuses a model without text_input with a clear error', async () => {
    await assert.rejects(client.chat.completions.create({ model: 'local-bad', messages: [{ role: 'user', content: 'hello' }] }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError);
      assert.equal(err.status, 400);
      assert.match(err.message, /local: model 'no_text' cannot serve chat: it has no input text_input \(inputs: IN\)/);
      return true;
    });
  });

  it('a client that goes away mid-stream cancels the decoupled request in the model', async () => {
    const cancelled = () => (globalThis as { __slowWordsCancelled?: number }).__slowWordsCancelled ?? 0;
    const before = cancelled();
    const stream = await client.chat.completions.create({ model: 'local-slow', stream: true, messages: [{ role: 'user', content: 'go' }] });
    let chunks = 0;
    // Leaving the loop makes the SDK abort its request: Herd sees the connection close.
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) chunks += 1;
      if (chunks === 3) break;
    }
    assert.equal(chunks, 3);
    for (let i = 0; i < 400 && cancelled() === before; i++) await pause(10);
    assert.equal(cancelled(), before + 1);
  });

  it('reaches the models of a remote Herd through base_url: generate, and generate_stream for a decoupled model', async () => {
    const text = await client.chat.completions.create({ model: 'remote-text', max_tokens: 2, messages: [{ role: 'user', content: 'hello big world' }] });
    assert.equal(text.choices[0]?.message.content, 'echo: hello');
    assert.equal(text.choices[0]?.finish_reason, 'length');
    assert.equal(text.usage?.prompt_tokens, 3);
    const stream = await client.chat.completions.create({ model: 'remote-echo', stream: true, messages: [{ role: 'user', content: 'a b' }] });
    const deltas: string[] = [];
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) deltas.push(chunk.choices[0].delta.content);
    assert.deepEqual(deltas, ['echo:', ' a', ' b']);
  });

  it('records ledger rows priced at zero for the triton deployments', async () => {
    const rows = await ledgerRows(1);
    const local = rows.filter((r) => r['provider'] === 'local' && r['status'] === 'ok');
    assert.ok(local.length >= 3, JSON.stringify(rows.map((r) => [r['model'], r['provider'], r['status']])));
    assert.ok(local.every((r) => r['cost_micros'] === 0 && r['list_usd_micros'] === 0));
    assert.ok(local.some((r) => r['model'] === 'local-text' && r['upstream_model'] === 'echo_text:1' && r['estimated'] === 0));
    const hosted = rows.find((r) => r['model'] === 'hosted');
    assert.ok(hosted && (hosted['cost_micros'] as number) > 0);
  });
});
