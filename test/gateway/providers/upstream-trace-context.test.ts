// Every upstream request carries its attempt span's context: traceparent (and tracestate) on an OpenAI-speaking
// upstream and on a remote Triton's KServe calls (metadata, config, generate); none without a span.
import { after, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LightAbortController } from '../../../src/core/abort-link.ts';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { createOpenAIProvider } from '../../../src/gateway/providers/openai/openai-provider.ts';
import { createRemoteTritonClient } from '../../../src/gateway/providers/triton/remote-triton-client.ts';
import { createTritonProvider } from '../../../src/gateway/providers/triton/triton-provider.ts';
import type { TraceParent } from '../../../src/tracing/trace-parent.ts';
import { openAICompletion } from '../helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';
import { readFixture, replayFixture } from '../helpers/replay-fixture.ts';

const request: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'Say hello' }] };
const signal = new LightAbortController().signal;
const parent: TraceParent = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true, traceState: 'herd=1', remote: false };

describe('trace context on upstream requests', () => {
  let upstream: MockUpstream;
  before(async () => {
    upstream = await startMockUpstream((req, res) => {
      if (req.url.startsWith('/v1/')) return sendJson(res, 200, openAICompletion('gpt-4.1', 'Bonjour'));
      if (req.url.endsWith('/config')) return replayFixture(res, readFixture('triton', 'model-config.json'));
      if (req.method === 'GET') return replayFixture(res, readFixture('triton', 'model-metadata.json'));
      return replayFixture(res, readFixture('triton', 'generate-stream.sse'));
    });
  });
  after(() => upstream.close());
  beforeEach(() => {
    upstream.requests.length = 0;
  });

  it('an OpenAI-speaking upstream: traceparent and tracestate with a span, nothing without one', async () => {
    const provider = createOpenAIProvider({ name: 'openai', baseUrl: `${upstream.url}/v1`, apiKey: 'sk-test', timeoutMs: 2000 });
    try {
      await provider.chat({ request, upstreamModel: 'gpt-4.1', traceParent: parent }, signal);
      await provider.chat({ request, upstreamModel: 'gpt-4.1' }, signal);
    } finally {
      await provider.close();
    }
    const [traced, plain] = upstream.requests;
    assert.equal(traced?.headers['traceparent'], `00-${parent.traceId}-${parent.spanId}-01`);
    assert.equal(traced?.headers['tracestate'], 'herd=1');
    assert.equal(traced?.headers['authorization'], 'Bearer sk-test');
    assert.equal(plain?.headers['traceparent'], undefined, 'the shared headers were not changed by the traced call');
  });

  it('a remote Triton: every KServe call of the attempt carries it', async () => {
    const provider = createTritonProvider({
      name: 'remote',
      client: createRemoteTritonClient({ provider: 'remote', baseUrl: upstream.url, headers: {}, apiKey: '', timeoutMs: 2000 }),
      timeoutMs: 2000,
    });
    try {
      await provider.chat({ request, upstreamModel: 'vllm_model', traceParent: parent }, signal);
    } finally {
      await provider.close();
    }
    assert.ok(upstream.requests.length >= 2);
    for (const r of upstream.requests) assert.equal(r.headers['traceparent'], `00-${parent.traceId}-${parent.spanId}-01`, r.url);
  });
});
