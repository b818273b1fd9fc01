// The triton provider's remote client replaying a Triton server's recorded KServe and generate-extension
// bodies (test/fixtures/triton/): metadata and config, generate_stream events, error bodies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LightAbortController } from '../../../src/core/abort-link.ts';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import type { Provider, ProviderStreamEvent } from '../../../src/gateway/providers/provider.ts';
import { createRemoteTritonClient } from '../../../src/gateway/providers/triton/remote-triton-client.ts';
import { createTritonProvider } from '../../../src/gateway/providers/triton/triton-provider.ts';
import { collect, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';
import { failure } from '../helpers/provider-events.ts';
import { readFixture, replayFixture } from '../helpers/replay-fixture.ts';

const request: ChatRequest = { model: 'vllm', messages: [{ role: 'user', content: 'Say hello' }] };
const signal = new LightAbortController().signal;

describe('triton provider (remote) on recorded fixtures', () => {
  let upstream: MockUpstream;
  let provider: Provider;
  /** What POST …/generate_stream answers with; metadata and config always answer as recorded. */
  let streamed = 'generate-stream.sse';

  before(async () => {
    upstream = await startMockUpstream((req, res) => {
      if (!req.url.startsWith('/v2/models/vllm_model')) return replayFixture(res, readFixture('triton', 'error-400-unknown-model.json'));
      if (req.url.endsWith('/config')) return replayFixture(res, readFixture('triton', 'model-config.json'));
      if (req.method === 'GET') return replayFixture(res, readFixture('triton', 'model-metadata.json'));
      return replayFixture(res, readFixture('triton', streamed));
    });
    provider = createTritonProvider({
      name: 'remote',
      client: createRemoteTritonClient({ provider: 'remote', baseUrl: upstream.url, headers: {}, apiKey: '', timeoutMs: 2000 }),
      timeoutMs: 2000,
    });
  });
  after(async () => {
    await provider.close();
    await upstream.close();
  });

  it('streams generate_stream events as chunks, with the counts and finish reason the last one carries', async () => {
    streamed = 'generate-stream.sse';
    const events = await collect(provider.stream({ request, upstreamModel: 'vllm_model' }, signal));
    const sent = upstream.requests.at(-1)!;
    assert.equal(sent.url, '/v2/models/vllm_model/generate_stream');
    assert.match((sent.body as { text_input: string }).text_input, /<\|im_start\|>user\nSay hello<\|im_end\|>/);
    const chunks = events.flatMap((e) => (e.type === 'chunk' ? [e.chunk] : []));
    assert.equal(chunks.map((c) => c.choices[0]!.delta.content ?? '').join(''), 'Hello there');
    const usage = events.find((e): e is Extract<ProviderStreamEvent, { type: 'usage' }> => e.type === 'usage')!.usage;
    assert.deepEqual([usage.promptTokens, usage.completionTokens, usage.estimated], [7, 3, false]);
    assert.deepEqual(events.at(-1), { type: 'done', finishReason: 'stop', rawFinishReason: 'stop' });
  });

  it('answers chat() whole from the same events', async () => {
    streamed = 'generate-stream.sse';
    const result = await provider.chat({ request, upstreamModel: 'vllm_model' }, signal);
    assert.equal(result.response.choices[0]?.message.content, 'Hello there');
    assert.equal(result.response.choices[0]?.finish_reason, 'stop');
  });

  it('fails on an error event mid-stream, and on a recorded 500', async () => {
    streamed = 'generate-stream-error.sse';
    let err = await failure(collect(provider.stream({ request, upstreamModel: 'vllm_model' }, signal)));
    assert.equal(err.failure, 'server_error');
    assert.match(err.message, /CUDA out of memory/);
    streamed = 'error-500-infer-failed.json';
    err = await failure(collect(provider.stream({ request, upstreamModel: 'vllm_model' }, signal)));
    assert.deepEqual([err.failure, err.status], ['server_error', 500]);
    assert.match(err.message, /CUDA out of memory/);
  });

  it('reports a model the server does not know (400) as not loaded: unavailable', async () => {
    const err = await failure(provider.chat({ request, upstreamModel: 'missing_model' }, signal));
    assert.equal(err.failure, 'unavailable');
    assert.match(err.message, /'missing_model' is not loaded/);
  });
});
