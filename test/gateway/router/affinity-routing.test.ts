// Prompt-cache affinity in the chat service, against two local upstreams of one model: a session stays on
// the deployment that served it while the strategy alone spreads requests; an open breaker moves the
// session and it stays moved; the choice ends with its TTL (or an hour for cache_control ttl 1h); a
// store that fails never fails a request. Time is a ManualClock: nothing sleeps.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../../src/core/clock.ts';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import { createChatService, type ChatService, type ChatServiceOptions } from '../../../src/gateway/flow/chat-service.ts';
import type { AffinityStore } from '../../../src/gateway/router/cache-affinity.ts';
import { resolveRoute } from '../../../src/gateway/router/resolve-route.ts';
import { PromptTokenEstimate } from '../../../src/gateway/router/prompt-token-estimate.ts';
import {
  gatewayConfig,
  openAICompletion,
  openAIErrorBody,
  openAIStreamFrames,
  scriptedUpstream,
  seededRandom,
  status,
  type ScriptedUpstream,
} from '../helpers/gateway-fixtures.ts';
import { startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';

const NAMES = ['left', 'right'] as const;
type Name = (typeof NAMES)[number];
const ENV = { LEFT_API_KEY: 'sk-l', RIGHT_API_KEY: 'sk-r' };

describe('prompt-cache affinity in the chat service', () => {
  const mocks = {} as Record<Name, MockUpstream>;
  const scripts = {} as Record<Name, ScriptedUpstream>;
  let service: ChatService | undefined;
  let clock: ManualClock;

  before(async () => {
    for (const name of NAMES) {
      scripts[name] = scriptedUpstream({ okJson: openAICompletion('gpt-4.1', `from ${name}`), okFrames: openAIStreamFrames('gpt-4.1', ['hi']), errorBody: openAIErrorBody });
      mocks[name] = await startMockUpstream(scripts[name].handler);
    }
  });
  after(async () => {
    for (const name of NAMES) await mocks[name].close();
  });
  beforeEach(() => {
    clock = new ManualClock();
    for (const name of NAMES) {
      mocks[name].requests.length = 0;
      scripts[name].script();
    }
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  function start(options: { affinity?: string; breaker?: string; overrides?: Partial<ChatServiceOptions> } = {}): ChatService {
    const config = gatewayConfig(`
providers:
  left: { type: openai, base_url: "${mocks.left.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 }${options.breaker ?? ''} }
  right: { type: openai, base_url: "${mocks.right.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 }${options.breaker ?? ''} }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    strategy: weighted
    deployments: [{ provider: left }, { provider: right }]
routes:
  affinity: { ${options.affinity ?? ''} }
`);
    service = createChatService({ config, env: ENV, clock, random: seededRandom(7), sleep: async () => undefined, ...options.overrides });
    return service;
  }

  const turn = (n: number, extra: Partial<ChatRequest> = {}): ChatRequest => ({
    model: 'gpt-4.1',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Count with me.' },
      ...Array.from({ length: n }, (_, i) => ({ role: 'assistant' as const, content: String(i) })),
    ],
    ...extra,
  });
  /** What the flow does once per request: the session identity, from the headers and the request. */
  async function send(chat: ChatService, request: ChatRequest, headers: Record<string, string> = {}) {
    const route = await resolveRoute(chat.catalog, request.model, new PromptTokenEstimate(request));
    const session = chat.resolveSession?.(request, { headers, dialect: 'openai-chat' }, route);
    return chat.complete(request, session === undefined ? {} : { session });
  }
  const counts = () => Object.fromEntries(NAMES.map((n) => [n, mocks[n].requests.length]));

  it('20 turns of one session stay on one deployment; the same requests without affinity are spread by the strategy', async () => {
    const pinned = start();
    const providers = new Set<string>();
    for (let i = 0; i < 20; i++) providers.add((await send(pinned, turn(i), { 'x-herd-session': 'conversation-1' })).meta.provider);
    assert.equal(providers.size, 1);
    assert.deepEqual(Object.values(counts()).sort(), [0, 20]);

    await service?.close();
    for (const name of NAMES) mocks[name].requests.length = 0;
    const spread = start({ affinity: 'enabled: false' });
    for (let i = 0; i < 20; i++) await send(spread, turn(i), { 'x-herd-session': 'conversation-1' });
    assert.ok(
      NAMES.every((n) => mocks[n].requests.length > 0),
      `weighted alone spreads: ${JSON.stringify(counts())}`,
    );
  });

  it('without any header the opening of the conversation is the identity: every turn lands where the first did', async () => {
    const chat = start();
    const first = (await send(chat, turn(0))).meta.provider;
    for (let i = 1; i < 10; i++) assert.equal((await send(chat, turn(i))).meta.provider, first);
  });

  it("the affine deployment's breaker opens: the session moves to the other one and stays there after it closes", async () => {
    // Always the first deployment when the strategy picks, so where the session goes is affinity's doing.
    const chat = start({ breaker: ', breaker: { min_requests: 2, failure_ratio: 0.5, cooldown_ms: 1000 }', overrides: { random: () => 0 } });
    assert.equal((await send(chat, turn(0), { 'x-herd-session': 's' })).meta.provider, 'left');
    // One failure in two requests opens left's breaker; another session's request, answered by right.
    scripts.left.script(status(503));
    assert.equal((await send(chat, turn(0), { 'x-herd-session': 'other' })).meta.provider, 'right');
    assert.equal(chat.health().breakers.find((b) => b.key === 'left/gpt-4.1')?.breaker, 'open');

    const moved = await send(chat, turn(1), { 'x-herd-session': 's' });
    assert.deepEqual([moved.meta.provider, moved.meta.attempts.length], ['right', 1], 'an open breaker is skipped, not tried');
    clock.advance(1000);
    assert.equal((await send(chat, turn(2), { 'x-herd-session': 'new-session' })).meta.provider, 'left', "left's probe succeeds: closed again");
    assert.equal((await send(chat, turn(3), { 'x-herd-session': 's' })).meta.provider, 'right', 'the session stays where its cache is warm');
  });

  it('a deployment that fails re-pins the session to the one that answered', async () => {
    const chat = start({ overrides: { random: () => 0 } });
    scripts.left.script(status(503));
    assert.equal((await send(chat, turn(0), { 'x-herd-session': 's' })).meta.provider, 'right');
    assert.equal((await send(chat, turn(1), { 'x-herd-session': 's' })).meta.provider, 'right');
    assert.equal((await send(chat, turn(1), { 'x-herd-session': 'another' })).meta.provider, 'left', 'the strategy alone picks left');
  });

  it('the choice lasts ttl_s after the last request, each request refreshing it; cache_control ttl 1h keeps it an hour', async () => {
    const chat = start({ affinity: 'ttl_s: 300', overrides: { random: () => 0 } });
    scripts.left.script(status(503));
    assert.equal((await send(chat, turn(0), { 'x-herd-session': 's' })).meta.provider, 'right');
    clock.advance(299_000);
    assert.equal((await send(chat, turn(1), { 'x-herd-session': 's' })).meta.provider, 'right', 'within the TTL; refreshed');
    clock.advance(299_000);
    assert.equal((await send(chat, turn(2), { 'x-herd-session': 's' })).meta.provider, 'right', 'within the refreshed TTL');
    clock.advance(300_000);
    assert.equal((await send(chat, turn(3), { 'x-herd-session': 's' })).meta.provider, 'left', 'expired: the strategy picks again');

    scripts.left.script(status(503));
    const hour = { cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } };
    assert.equal((await send(chat, turn(0, hour), { 'x-herd-session': 'h' })).meta.provider, 'right');
    clock.advance(3_599_000);
    assert.equal((await send(chat, turn(1, hour), { 'x-herd-session': 'h' })).meta.provider, 'right');
    clock.advance(3_600_000);
    assert.equal((await send(chat, turn(2, hour), { 'x-herd-session': 'h' })).meta.provider, 'left');
  });

  it('a store that cannot answer (or throws) never fails the request: the strategy picks', async () => {
    const broken: AffinityStore = {
      shared: true,
      get: () => Promise.reject(new Error('store down')),
      set: () => undefined,
      close: () => Promise.resolve(),
    };
    const chat = start({ overrides: { affinity: broken, random: () => 0 } });
    assert.equal((await send(chat, turn(0), { 'x-herd-session': 's' })).meta.provider, 'left');
  });

  it('a model with one deployment and no fallbacks needs no identity', async () => {
    const config = gatewayConfig(`
providers:
  left: { type: openai, base_url: "${mocks.left.url}/v1", exchange_rate: 1.0 }
models:
  solo: { price: { input: 1, output: 1 }, deployments: [{ provider: left, upstream_model: gpt-4.1 }] }
`);
    service = createChatService({ config, env: ENV, clock });
    const route = await resolveRoute(service.catalog, 'solo', new PromptTokenEstimate(turn(0, { model: 'solo' })));
    assert.equal(service.resolveSession?.(turn(0, { model: 'solo' }), { headers: { 'x-herd-session': 's' }, dialect: 'openai-chat' }, route), undefined);
  });
});
