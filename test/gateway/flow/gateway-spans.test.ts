// The gateway flow's spans in process (a recording tracer, no exporter): the operation under the caller's parent
// (an llm model's step through the serving ChatPort's traceparent), each attempt its child, content only when
// captured, a failed operation's status, and the GenAI provider names.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LightAbortController } from '../../../src/core/abort-link.ts';
import { genAiProviderName } from '../../../src/gateway/flow/attempt-spans.ts';
import { ChatGateway, type GatewayCaller } from '../../../src/gateway/flow/chat-gateway.ts';
import { createChatService, type ChatService } from '../../../src/gateway/flow/chat-service.ts';
import { createServingChatPort } from '../../../src/gateway/flow/serving-chat-port.ts';
import type { KeyInfo } from '../../../src/gateway/keys/key-store.ts';
import type { CatalogProvider } from '../../../src/gateway/router/gateway-catalog.ts';
import type { RecordedSpan } from '../../../src/tracing/recorded-span.ts';
import { RecordingTracer } from '../../../src/tracing/recording-tracer.ts';
import { testKey } from '../billing/budget-fixtures.ts';
import { gatewayConfig, openAICompletion, openAIErrorBody, openAIStreamFrames, scriptedUpstream, status, type ScriptedUpstream } from '../helpers/gateway-fixtures.ts';
import { startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';

const ENV = { RELAY_API_KEY: 'sk-relay-secret' };
const KEY: KeyInfo = testKey({ id: 'key_team', name: 'team', prefix: 'sk-herd-team' });
const STEP_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const STEP_SPAN = '00f067aa0ba902b7';

describe('gateway flow spans', () => {
  let upstream: MockUpstream;
  let script: ScriptedUpstream;
  let chat: ChatService;
  let ended: RecordedSpan[];
  const gatewayWith = (captureContent: boolean) =>
    new ChatGateway({
      chat,
      tracing: {
        tracer: new RecordingTracer(
          () => true,
          (span) => ended.push(span),
        ),
        captureContent,
      },
    });

  before(async () => {
    script = scriptedUpstream({ okJson: openAICompletion('gpt-4.1-upstream', 'Bonjour'), okFrames: openAIStreamFrames('gpt-4.1-upstream', ['Bon']), errorBody: openAIErrorBody });
    upstream = await startMockUpstream(script.handler);
  });
  after(() => upstream.close());
  beforeEach(() => {
    script.script();
    upstream.requests.length = 0;
    ended = [];
    const config = gatewayConfig(`
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: RELAY_API_KEY, retry: { attempts: 2, base_ms: 1, cap_ms: 2 } }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay, upstream_model: gpt-4.1-upstream }]
`);
    chat = createChatService({ config, env: ENV, sleep: async () => undefined });
  });
  afterEach(() => chat.close());

  const caller = (extra: Partial<GatewayCaller> = {}): GatewayCaller => ({ key: KEY, headers: {}, signal: new LightAbortController().signal, ...extra });

  it("an llm step's traceparent through the serving ChatPort: the operation is the step's child, the attempts the operation's", async () => {
    const gateway = gatewayWith(false);
    const port = createServingChatPort({ flow: gateway, authenticator: { isOpen: () => false } as never, identity: { name: 'svc', models: '*' }, env: {} });
    script.script(status(503));
    await port
      .complete({
        model: 'gpt-4.1',
        messages: [{ role: 'user', content: 'hi' }],
        priority: 'NORMAL',
        origin: 'triton:smart_chat/chat:1',
        traceparent: `00-${STEP_TRACE}-${STEP_SPAN}-01`,
      })
      .catch((err: unknown) => assert.fail(`the call failed: ${String(err)}`));
    const operation = ended.find((s) => s.name === 'gateway chat');
    const attempts = ended.filter((s) => s.kind === 3);
    assert.ok(operation);
    assert.equal(operation.traceId, STEP_TRACE);
    assert.equal(operation.parentSpanId, STEP_SPAN);
    assert.equal(operation.attribute('herd.origin'), 'triton:smart_chat/chat:1');
    assert.deepEqual(
      attempts.map((s) => [s.parentSpanId, s.attribute('herd.attempt'), s.attribute('error.type') ?? 'ok']),
      [
        [operation.spanId, 1, 'unavailable'],
        [operation.spanId, 2, 'ok'],
      ],
    );
    assert.deepEqual(
      upstream.requests.map((r) => r.headers['traceparent']),
      attempts.map((s) => `00-${STEP_TRACE}-${s.spanId}-01`),
    );
  });

  it('content is recorded only with capture_content on', async () => {
    await gatewayWith(false).handle({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'the prompt' }] }, caller());
    const off = ended.find((s) => s.kind === 3);
    assert.equal(off?.attribute('gen_ai.input.messages'), undefined);
    assert.equal(off?.attribute('gen_ai.output.messages'), undefined);
    ended = [];
    await gatewayWith(true).handle({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'the prompt' }] }, caller());
    const on = ended.find((s) => s.kind === 3);
    assert.match(String(on?.attribute('gen_ai.input.messages')), /the prompt/);
    assert.match(String(on?.attribute('gen_ai.output.messages')), /Bonjour/);
  });

  it('a refused operation (unknown model) ends its span with status ERROR and error.type', async () => {
    await assert.rejects(gatewayWith(false).handle({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }, caller()));
    assert.equal(ended.length, 1);
    assert.equal(ended[0]?.statusCode, 2);
    assert.equal(ended[0]?.attribute('error.type'), 'NOT_FOUND');
  });

  it('gen_ai.provider.name: the conventions’ well-known names', () => {
    const provider = (type: CatalogProvider['type'], name: string, baseUrl?: string) => ({ type, name, baseUrl }) as CatalogProvider;
    assert.equal(genAiProviderName(provider('openai', 'openai')), 'openai');
    assert.equal(genAiProviderName(provider('openai', 'ds', 'https://api.deepseek.com/v1')), 'deepseek');
    assert.equal(genAiProviderName(provider('openai', 'deepseek', 'https://relay.example/v1')), 'deepseek');
    assert.equal(genAiProviderName(provider('gemini', 'google')), 'gcp.gemini');
    assert.equal(genAiProviderName(provider('anthropic', 'claude')), 'anthropic');
  });
});
