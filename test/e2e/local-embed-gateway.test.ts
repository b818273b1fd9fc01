// POST /v1/embeddings served by the example model local-embed (an ensemble: js tokenizer, ONNX encoder)
// in process (a `type: triton` deployment), with the `openai` SDK as the client: the vectors are the
// model's own (as KServe answers them, up to float rounding in another batch), the texts of one request
// are batched by the encoder, and the ledger has the request at price 0.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import OpenAI from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { EXAMPLE_REPOSITORY, postJson, request } from './start-test-server.ts';

describe('/v1/embeddings on local-embed, in process', () => {
  let server: HerdServer;
  let client: OpenAI;
  let dir: string;
  let ledger: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herd-local-embed-gateway-'));
    for (const name of ['local-embed', 'local-embed-tokenizer', 'local-embed-encoder']) cpSync(join(EXAMPLE_REPOSITORY, name), join(dir, 'repo', name), { recursive: true });
    ledger = join(dir, 'ledger.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving: { model_repository: ["${join(dir, 'repo')}"] }
auth: { db: "${join(dir, 'keys.db')}" }
billing: { currency: USD, ledger: "sqlite:${ledger}", flush_interval_ms: 10 }
providers:
  local: { type: triton, timeout_ms: 5000, retry: { attempts: 1 } }
models:
  local-embed:
    kind: embedding
    price: { input: 0, output: 0 }
    deployments: [{ provider: local }]
  missing-embed:
    kind: embedding
    price: { input: 0, output: 0 }
    deployments: [{ provider: local, upstream_model: not_loaded }]
    fallbacks: [local-embed]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: {} });
    client = new OpenAI({ apiKey: 'unused', baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const kserve = async (text: string): Promise<number[]> => {
    const res = await postJson(`${server.httpUrl}/v2/models/local-embed/infer`, { inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [1, 1], data: [text] }] });
    return (res.json() as { outputs: { data: number[] }[] }).outputs[0]!.data;
  };

  const encoderStats = async () =>
    ((await request(`${server.httpUrl}/v2/models/local-embed-encoder/stats`)).json() as { model_stats: { execution_count: number }[] }).model_stats[0]!;

  it('answers the model’s own vectors (base64 by default, float on request), one inference per text, on the ledger at price 0', async () => {
    const texts = Array.from({ length: 12 }, (_, i) => `text number ${i} for the local model`);
    const before = (await request(`${server.httpUrl}/v2/models/local-embed/stats`)).json() as { model_stats: { inference_count: number }[] };
    const encoderBefore = await encoderStats();
    const { data, response } = await client.embeddings.create({ model: 'local-embed', input: texts }).withResponse();
    assert.equal(response.headers.get('x-herd-provider'), 'local');
    assert.equal(data.model, 'local-embed');
    assert.equal(data.data.length, texts.length);
    assert.ok(data.usage.prompt_tokens > 0, 'counted by Herd');
    const expected = await kserve(texts[3]!);
    assert.equal(data.data[3]!.embedding.length, 256);
    for (const [i, v] of data.data[3]!.embedding.entries()) assert.ok(Math.abs(v - expected[i]!) < 1e-5);
    const encoderAfter = await encoderStats();
    assert.ok(
      encoderAfter.execution_count - encoderBefore.execution_count < texts.length,
      `the ${texts.length} texts share encoder executions: ${encoderAfter.execution_count - encoderBefore.execution_count}`,
    );
    const floats = await client.embeddings.create({ model: 'local-embed', input: texts[3]!, encoding_format: 'float' });
    for (const [i, v] of floats.data[0]!.embedding.entries()) assert.ok(Math.abs(v - expected[i]!) < 1e-5);
    await assert.rejects(client.embeddings.create({ model: 'local-embed', input: 'x', dimensions: 64 }), (err: unknown) => err instanceof OpenAI.BadRequestError);
    const after = (await request(`${server.httpUrl}/v2/models/local-embed/stats`)).json() as { model_stats: { inference_count: number }[] };
    assert.equal(after.model_stats[0]!.inference_count - before.model_stats[0]!.inference_count, texts.length + 1 + 1, 'one inference per text; the refused request made none');

    for (let i = 0; ; i++) {
      const db = new Database(ledger, { readonly: true });
      const rows = db.prepare("SELECT model, provider, cost_micros, completion_tokens, estimated, status FROM ledger_requests WHERE model = 'local-embed'").all() as {
        cost_micros: number;
        completion_tokens: number;
        estimated: number;
        status: string;
      }[];
      db.close();
      if (rows.length >= 2 || i === 200) {
        assert.equal(rows.length, 2);
        for (const row of rows)
          assert.deepEqual(
            { cost: row.cost_micros, completion: row.completion_tokens, estimated: row.estimated, status: row.status },
            { cost: 0, completion: 0, estimated: 1, status: 'ok' },
          );
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  });

  it('a local model that is not loaded falls back to the next embedding model', async () => {
    const { data, response } = await client.embeddings.create({ model: 'missing-embed', input: 'hello' }).withResponse();
    assert.equal(response.headers.get('x-herd-model'), 'local-embed');
    assert.equal(data.data[0]!.embedding.length, 256);
  });
});
