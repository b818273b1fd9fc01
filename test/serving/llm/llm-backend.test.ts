// The `llm` backend end to end: KServe infer, generate and generate_stream against a local OpenAI-wire
// upstream, through the gateway's flow (fallbacks, ledger rows naming the serving model and principal),
// and cancellation when the Triton client leaves mid-stream.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, request, startTestServer } from '../../e2e/start-test-server.ts';
import { pause } from '../../gateway/helpers/mock-upstream.ts';
import { llmModel, startGatewayHerd, writeModels, type ChatBody } from './llm-fixtures.ts';

const bytes = (name: string, value: string) => ({ name, datatype: 'BYTES', shape: [1], data: [value] });
const bool = (name: string, value: boolean) => ({ name, datatype: 'BOOL', shape: [1], data: [value] });

test('KServe infer: text_input through the gateway, vLLM-shaped outputs, sampling_parameters, a per-request model', async () => {
  const herd = await startGatewayHerd([writeModels({ chat: llmModel('chat') })]);
  try {
    const url = `${herd.server.httpUrl}/v2/models/chat`;
    const config = (await request(`${url}/config`)).json() as { input: { name: string }[]; output: { name: string }[] };
    assert.deepEqual(
      config.output.map((o) => o.name),
      ['text_output', 'finish_reason', 'num_input_tokens', 'num_output_tokens', 'cost'],
    );
    assert.ok(config.input.some((i) => i.name === 'sampling_parameters'));

    const res = await postJson(`${url}/infer`, {
      inputs: [
        bytes('text_input', 'hello'),
        bytes('sampling_parameters', '{"max_tokens": 7, "temperature": 0.5}'),
        bool('return_finish_reason', true),
        bool('return_num_output_tokens', true),
        bool('return_cost', true),
      ],
    });
    assert.equal(res.status, 200, res.body.toString());
    const outputs = (res.json() as { outputs: { name: string; data: unknown[] }[] }).outputs;
    const out = new Map(outputs.map((o) => [o.name, o.data[0]]));
    // vLLM prepends the prompt unless exclude_input_in_output is set.
    assert.equal(out.get('text_output'), 'helloecho(balanced-up): hello');
    assert.equal(out.get('finish_reason'), 'stop');
    assert.equal(out.get('num_output_tokens'), 3);
    // 12 prompt + 3 completion tokens at $1/$2 per million, exchange rate 1.0 (CNY).
    assert.ok(Math.abs((out.get('cost') as number) - (12 * 1 + 3 * 2) / 1e6) < 1e-9, String(out.get('cost')));
    // Priced once, by the gateway's settlement: the output is what the ledger row records.
    const [row] = await herd.waitForLedgerRows(1);
    assert.equal(Math.round((out.get('cost') as number) * 1e6), row?.['cost_micros']);
    const sent = herd.upstream.requests.at(-1)?.body as ChatBody;
    assert.equal(sent.max_tokens, 7);
    assert.equal(sent.temperature, 0.5);
    assert.deepEqual(sent.messages, [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hello' },
    ]);

    const override = await postJson(`${url}/infer`, { inputs: [bytes('text_input', 'hi'), bytes('model', 'fast'), bool('exclude_input_in_output', true)] });
    assert.equal((override.json() as { outputs: { data: string[] }[] }).outputs[0]?.data[0], 'echo(fast-up): hi');

    const badSampling = await postJson(`${url}/infer`, { inputs: [bytes('text_input', 'x'), bytes('sampling_parameters', '{"best_of": 2}')] });
    assert.equal(badSampling.status, 400);
    assert.match((badSampling.json() as { error: string }).error, /best_of/);
  } finally {
    await herd.close();
  }
});

test('generate and generate_stream: parameters become tensors or sampling settings; a decoupled model streams', async () => {
  const herd = await startGatewayHerd([writeModels({ chat: llmModel('chat'), chat_stream: llmModel('chat_stream', { decoupled: true, model: 'fast' }) })]);
  try {
    const base = herd.server.httpUrl;
    const single = await postJson(`${base}/v2/models/chat/generate`, { text_input: 'one two', parameters: { max_tokens: 5, exclude_input_in_output: true } });
    assert.deepEqual(single.json(), { model_name: 'chat', model_version: '1', text_output: 'echo(balanced-up): one two' });
    assert.equal((herd.upstream.requests.at(-1)?.body as ChatBody | undefined)?.max_tokens, 5);

    const stream = await postJson(`${base}/v2/models/chat_stream/generate_stream`, { text_input: 'a b', stream: true, return_finish_reason: true });
    assert.equal(stream.status, 200);
    const events = stream.body
      .toString()
      .split('\n\n')
      .filter(Boolean)
      .map((e) => JSON.parse(e.replace(/^data: /, '')) as Record<string, unknown>);
    assert.deepEqual(
      events.map((e) => e['text_output']),
      ['echo(fast-up):', ' a', ' b', ''],
    );
    assert.equal(events.at(-1)?.['finish_reason'], 'stop');
    assert.ok(!stream.body.toString().includes('[DONE]'));

    const notDecoupled = await postJson(`${base}/v2/models/chat/generate`, { text_input: 'x', stream: true });
    assert.equal(notDecoupled.status, 400);
    assert.match((notDecoupled.json() as { error: string }).error, /not decoupled/);
  } finally {
    await herd.close();
  }
});

test('fallbacks and the ledger: a failing upstream falls back; the row names the serving model and principal; priority maps', async () => {
  const herd = await startGatewayHerd([writeModels({ chat: llmModel('chat') })], { balancedUpstream: 'fail-balanced' });
  try {
    const res = await postJson(`${herd.server.httpUrl}/v2/models/chat/infer`, {
      parameters: { priority: 1 },
      inputs: [bytes('text_input', 'q'), bool('exclude_input_in_output', true)],
    });
    assert.equal(res.status, 200, res.body.toString());
    assert.equal((res.json() as { outputs: { data: string[] }[] }).outputs[0]?.data[0], 'echo(quality-up): q');
  } finally {
    await herd.close();
  }
  const rows = herd.ledgerRows();
  assert.equal(rows.length, 1);
  const row = rows[0] as Record<string, unknown>;
  assert.equal(row['origin'], 'triton:chat/1');
  assert.equal(row['key_name'], 'smart-chat-service');
  assert.equal(row['model_requested'], 'balanced');
  assert.equal(row['model'], 'quality-model');
  assert.equal(row['attempts'], 2);
  assert.equal(row['priority'], 'HIGH');
});

test('no provider key: the model loads and answers a clear upstream-unavailable error; no gateway at all: UNAVAILABLE', async () => {
  const repo = writeModels({ chat: llmModel('chat') });
  const herd = await startGatewayHerd([repo], { providerKey: false });
  try {
    const res = await postJson(`${herd.server.httpUrl}/v2/models/chat/generate`, { text_input: 'x' });
    assert.equal(res.status, 503, res.body.toString());
    assert.match((res.json() as { error: string }).error, /^llm model 'chat': .*FAKE_RELAY_KEY/);
  } finally {
    await herd.close();
  }
  const bare = await startTestServer({ repositories: [repo] });
  try {
    const res = await postJson(`${bare.httpUrl}/v2/models/chat/generate`, { text_input: 'x' });
    assert.equal(res.status, 503);
    // The backend's own refusals and the conversion's are each named once, by kind, never by reading the text.
    assert.match((res.json() as { error: string }).error, /^llm model 'chat' cannot call an LLM: the gateway is not configured/);
    const badSampling = await postJson(`${bare.httpUrl}/v2/models/chat/infer`, { inputs: [bytes('text_input', 'x'), bytes('sampling_parameters', '{"temperature": 9}')] });
    assert.equal(badSampling.status, 400, badSampling.body.toString());
    assert.match((badSampling.json() as { error: string }).error, /^llm model 'chat': sampling parameter 'temperature' must be a number/);
  } finally {
    await bare.close();
  }
});

test('a client that leaves mid-stream aborts the upstream call, and the ledger bills what was delivered', async () => {
  const herd = await startGatewayHerd([writeModels({ chat_stream: llmModel('chat_stream', { decoupled: true }) })], { frameDelayMs: 40 });
  try {
    const controller = new AbortController();
    const res = await fetch(`${herd.server.httpUrl}/v2/models/chat_stream/generate_stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      signal: controller.signal,
      body: JSON.stringify({ text_input: Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '), stream: true }),
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    controller.abort();
    for (let i = 0; i < 50 && herd.upstream.closedEarly === 0; i++) await pause(20);
    assert.equal(herd.upstream.closedEarly, 1, 'the upstream request was aborted');
    // Settling a cancelled stream counts its delivered text first (the tokenizer may still be loading).
    await herd.waitForLedgerRows(1);
  } finally {
    await herd.close();
  }
  const row = herd.ledgerRows()[0] as Record<string, unknown>;
  assert.equal(row['status'], 'cancelled');
  assert.equal(row['origin'], 'triton:chat_stream/1');
  const completion = row['completion_tokens'] as number;
  assert.ok(completion > 0 && completion < 40, `billed ${completion} completion tokens for a partly delivered answer`);
});
