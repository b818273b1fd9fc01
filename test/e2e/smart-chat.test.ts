// Seed article 000's pipeline from the example repository: token_counter -> model_router -> chat as the
// ensemble smart_chat, against a local OpenAI-wire upstream: each routing branch, a preference, a
// failing step naming itself, and the clear error with no provider key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EXAMPLE_REPOSITORY, postJson } from './start-test-server.ts';
import { startGatewayHerd, type ChatBody } from '../serving/llm/llm-fixtures.ts';

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 10}`).join(' ');

test('smart_chat routes by token count (fast, balanced, quality) and by preference, over infer and generate', async () => {
  const herd = await startGatewayHerd([EXAMPLE_REPOSITORY]);
  try {
    const url = `${herd.server.httpUrl}/v2/models/smart_chat`;
    const cases: [string, string, string][] = [
      ['short', 'hello there', 'fast'],
      ['medium', words(800), 'balanced'],
      ['long', words(3000), 'quality'],
    ];
    for (const [label, prompt, tier] of cases) {
      const res = await postJson(`${url}/generate`, { text_input: prompt });
      assert.equal(res.status, 200, `${label}: ${res.body.toString().slice(0, 300)}`);
      const body = res.json() as { selected_model: string; text_output: string; token_count: number };
      assert.equal(body.selected_model, tier, label);
      assert.ok(body.text_output.startsWith(`echo(${tier}-up): `), `${label}: ${body.text_output.slice(0, 60)}`);
      assert.equal((herd.upstream.requests.at(-1)?.body as ChatBody | undefined)?.model, `${tier}-up`);
    }

    const preferred = await postJson(`${url}/infer`, {
      inputs: [
        { name: 'text_input', datatype: 'BYTES', shape: [1], data: ['hello'] },
        { name: 'preference', datatype: 'BYTES', shape: [1], data: ['quality'] },
      ],
      outputs: [{ name: 'selected_model' }, { name: 'text_output' }],
    });
    assert.equal(preferred.status, 200, preferred.body.toString());
    const outputs = (preferred.json() as { outputs: { name: string; data: string[] }[] }).outputs;
    assert.deepEqual(
      outputs.map((o) => [o.name, o.data[0]]),
      [
        ['selected_model', 'quality'],
        ['text_output', 'echo(quality-up): hello'],
      ],
    );

    const bad = await postJson(`${url}/generate`, { text_input: 'hi', preference: 'cheapest' });
    assert.equal(bad.status, 400);
    assert.match(
      (bad.json() as { error: string }).error,
      /^in ensemble 'smart_chat', step 'model_router': model_router: preference 'cheapest' is not one of fast, balanced, quality/,
    );
  } finally {
    await herd.close();
  }
  const rows = herd.ledgerRows();
  assert.equal(rows.length, 4);
  // The step's rows name the ensemble that ran it.
  assert.ok(
    rows.every((r) => r['origin'] === 'triton:smart_chat/chat:1' && r['key_name'] === 'smart-chat-service'),
    JSON.stringify(rows.map((r) => r['origin'])),
  );
  assert.deepEqual(
    rows.map((r) => r['model_requested']),
    ['fast', 'balanced', 'quality', 'quality'],
  );
});

test('smart_chat with no provider key: loads, and answers a clear upstream-unavailable error naming the step', async () => {
  const herd = await startGatewayHerd([EXAMPLE_REPOSITORY], { providerKey: false });
  try {
    const ready = await fetch(`${herd.server.httpUrl}/v2/models/smart_chat/ready`);
    assert.equal(ready.status, 200);
    const res = await postJson(`${herd.server.httpUrl}/v2/models/smart_chat/generate`, { text_input: 'hello' });
    assert.equal(res.status, 503, res.body.toString());
    assert.match((res.json() as { error: string }).error, /^in ensemble 'smart_chat', step 'chat': llm model 'chat': .*FAKE_RELAY_KEY/);
  } finally {
    await herd.close();
  }
});
