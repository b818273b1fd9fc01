// The triton provider called directly: embed() on a JS embedding model in process (the texts reach the
// dynamic batcher together) and on the same Herd over HTTP; a remote server without the generate
// extension (KServe infer JSON instead); a model that is not loaded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { LightAbortController } from '../../../src/core/abort-link.ts';
import type { HerdServer } from '../../../src/app.ts';
import { InferenceService } from '../../../src/serving/inference-service.ts';
import { createServingInferencePort } from '../../../src/serving/serving-inference-port.ts';
import { createLocalTritonClient } from '../../../src/gateway/providers/triton/local-triton-client.ts';
import { createRemoteTritonClient } from '../../../src/gateway/providers/triton/remote-triton-client.ts';
import { createTritonProvider } from '../../../src/gateway/providers/triton/triton-provider.ts';
import type { Provider } from '../../../src/gateway/providers/provider.ts';
import { UpstreamError } from '../../../src/gateway/protocol/upstream-error.ts';
import { startTestServer } from '../../e2e/start-test-server.ts';
import { sendJson, startMockUpstream } from '../helpers/mock-upstream.ts';

const FIXTURES = resolve('test/fixtures/triton_provider_repository');
const signal = new LightAbortController().signal;

/** tiny_embed's vector, computed here the way the model does. */
function expected(text: string): number[] {
  const v = [text.length, (text.match(/[aeiou]/gi) ?? []).length, (text.match(/ /g) ?? []).length, 1];
  const norm = Math.hypot(...v);
  return v.map((x) => Math.fround(x / norm));
}

const rejectsWith = (promise: Promise<unknown>, failure: string, message: RegExp) =>
  assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof UpstreamError, String(err));
    assert.equal(err.failure, failure);
    assert.match(err.message, message);
    return true;
  });

describe('triton provider', () => {
  let server: HerdServer;
  let local: Provider;
  let remote: Provider;
  const batches = () => ((globalThis as { __tinyEmbedBatches?: number[] }).__tinyEmbedBatches ??= []);

  before(async () => {
    server = await startTestServer({ repositories: [FIXTURES], controlMode: 'explicit', loadModel: ['tiny_embed', 'echo_text'] });
    local = createTritonProvider({ name: 'local', client: createLocalTritonClient('local', createServingInferencePort(new InferenceService(server.repository))), timeoutMs: 5000 });
    remote = createTritonProvider({
      name: 'remote',
      client: createRemoteTritonClient({ provider: 'remote', baseUrl: server.httpUrl, headers: {}, apiKey: '', timeoutMs: 5000 }),
      timeoutMs: 5000,
    });
  });

  after(async () => {
    await local?.close();
    await remote?.close();
    await server?.close();
  });

  it('embeds texts in process, sent together so the dynamic batcher batches them', async () => {
    const texts = ['hello world', 'a', 'triton in process', 'batch me'];
    batches().length = 0;
    const result = await local.embed!({ inputs: texts, upstreamModel: 'tiny_embed' }, signal);
    assert.deepEqual(
      result.vectors.map((v) => Array.from(v)),
      texts.map(expected),
    );
    assert.ok(result.usage.estimated && result.usage.promptTokens >= texts.length);
    // The batcher waits up to 200 ms for a batch: texts sent together arrive together.
    assert.ok(Math.max(...batches()) > 1, `batches: ${batches().join(',')}`);
  });

  it('shortens vectors for a matryoshka model, refuses more dimensions than it has', async () => {
    const short = await local.embed!({ inputs: ['hello world'], upstreamModel: 'tiny_embed', dimensions: 2 }, signal);
    const full = expected('hello world').slice(0, 2);
    const norm = Math.hypot(...full);
    assert.deepEqual(
      Array.from(short.vectors[0] ?? []).map((x) => x.toFixed(5)),
      full.map((x) => (x / norm).toFixed(5)),
    );
    await rejectsWith(
      local.embed!({ inputs: ['x'], upstreamModel: 'tiny_embed', dimensions: 8 }, signal),
      'invalid_request',
      /makes 4-dimensional vectors; 8 dimensions were asked for/,
    );
  });

  it('embeds over HTTP from a remote server (generate, the same vectors)', async () => {
    const result = await remote.embed!({ inputs: ['hello world', 'b'], upstreamModel: 'tiny_embed' }, signal);
    assert.deepEqual(
      result.vectors.map((v) => Array.from(v)),
      ['hello world', 'b'].map(expected),
    );
  });

  it('refuses embeddings from a text model and chat from a model that is not loaded', async () => {
    await rejectsWith(local.embed!({ inputs: ['x'], upstreamModel: 'echo_text' }, signal), 'invalid_request', /model 'echo_text' cannot serve embeddings: no single FP32 output/);
    const chat = { request: { model: 'x', messages: [{ role: 'user' as const, content: 'hi' }] }, upstreamModel: 'tiny_embed_2' };
    await rejectsWith(local.chat(chat, signal), 'unavailable', /^local: model 'tiny_embed_2' is not loaded$/);
    await rejectsWith(remote.chat(chat, signal), 'unavailable', /^remote: model 'tiny_embed_2' is not loaded$/);
    await rejectsWith(local.chat({ ...chat, upstreamModel: 'echo_text:7' }, signal), 'unavailable', /model 'echo_text' version 7 is not loaded/);
  });
});

it('a remote server without the generate extension is called through KServe infer JSON', async () => {
  const paths: string[] = [];
  const kserve = await startMockUpstream((req, res) => {
    paths.push(`${req.method} ${req.url}`);
    if (req.url === '/v2/models/tgi') {
      sendJson(res, 200, {
        name: 'tgi',
        versions: ['1'],
        inputs: [
          { name: 'text_input', datatype: 'BYTES', shape: [-1, 1] },
          { name: 'sampling_parameters', datatype: 'BYTES', shape: [-1, 1] },
        ],
        outputs: [{ name: 'text_output', datatype: 'BYTES', shape: [-1, 1] }],
      });
    } else if (req.url === '/v2/models/tgi/config') sendJson(res, 200, { name: 'tgi', max_batch_size: 4, parameters: { prompt_template: { string_value: 'raw' } } });
    else if (req.url === '/v2/models/tgi/infer') {
      const body = req.body as { inputs: { name: string; shape: number[]; data: string[] }[] };
      const prompt = body.inputs.find((i) => i.name === 'text_input');
      sendJson(res, 200, {
        model_name: 'tgi',
        model_version: '1',
        outputs: [{ name: 'text_output', datatype: 'BYTES', shape: [1, 1], data: [`${JSON.stringify(prompt?.shape)} ${prompt?.data[0]}`] }],
      });
    } else sendJson(res, 404, { error: 'Not Found' });
  });
  const provider = createTritonProvider({
    name: 'tgi-server',
    client: createRemoteTritonClient({ provider: 'tgi-server', baseUrl: kserve.url, headers: {}, apiKey: 'sk-t', timeoutMs: 5000 }),
    timeoutMs: 5000,
  });
  try {
    const chat = { request: { model: 'x', messages: [{ role: 'user' as const, content: 'hi there' }], max_tokens: 5 }, upstreamModel: 'tgi' };
    const first = await provider.chat(chat, signal);
    assert.equal(first.response.choices[0]?.message.content, '[1,1] hi there');
    assert.equal(first.usage.estimated, true);
    const second = await provider.chat(chat, signal);
    assert.equal(second.response.choices[0]?.message.content, '[1,1] hi there');
    // Metadata is read once; after generate's 404 the model goes straight to infer.
    assert.deepEqual(paths, ['GET /v2/models/tgi', 'GET /v2/models/tgi/config', 'POST /v2/models/tgi/generate', 'POST /v2/models/tgi/infer', 'POST /v2/models/tgi/infer']);
    assert.equal(kserve.requests[0]?.headers.authorization, 'Bearer sk-t');
  } finally {
    await provider.close();
    await kserve.close();
  }
});
