// The admission hook inside the chat service's attempt loop, against local OpenAI-style upstreams:
// one acquire per attempt (retries included) with the request's priority and remaining deadline,
// the slot held until the answer — for a stream, its last chunk — a busy deployment skipped for
// the next one, 503 + Retry-After when every one is busy, and a client abort while queued.
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { limitsConfigSchema } from '../../../src/config/limits-config-schema.ts';
import { HerdError } from '../../../src/core/errors.ts';
import { createChatService, type ChatService, type ChatServiceOptions } from '../../../src/gateway/flow/chat-service.ts';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import type { Admission, AdmissionRequest } from '../../../src/gateway/limits/admission.ts';
import { createGatewayLimits } from '../../../src/gateway/limits/create-gateway-limits.ts';
import type { Sleep } from '../../../src/gateway/resilience/sleep.ts';
import {
  gatewayConfig,
  ok,
  openAICompletion,
  openAIErrorBody,
  openAIStreamFrames,
  scriptedUpstream,
  seededRandom,
  status,
  type ScriptedUpstream,
} from '../helpers/gateway-fixtures.ts';
import { collect, pause, startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';

const NAMES = ['holysheep', 'openai'] as const;
type Name = (typeof NAMES)[number];
const ENV = { HOLYSHEEP_API_KEY: 'sk-hs', OPENAI_API_KEY: 'sk-oa' };
const ask = (extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'Say hello in French' }], ...extra });
const noSleep: Sleep = async (_ms, signal) => {
  if (signal.aborted) throw signal.reason;
};

/** An Admission that records every acquire and release, and refuses where told. */
function recordingAdmission(refuse: (r: AdmissionRequest) => HerdError | undefined = () => undefined) {
  const calls: AdmissionRequest[] = [];
  const state = { released: 0 };
  const admission: Admission = {
    async acquire(request) {
      calls.push(request);
      const err = refuse(request);
      if (err) throw err;
      return {
        waitedMs: 0,
        release: () => {
          state.released++;
        },
      };
    },
  };
  return { admission, calls, state };
}

describe('admission in the chat service', () => {
  const mocks = {} as Record<Name, MockUpstream>;
  const scripts = {} as Record<Name, ScriptedUpstream>;
  let service: ChatService | undefined;

  before(async () => {
    for (const name of NAMES) {
      scripts[name] = scriptedUpstream({
        okJson: openAICompletion('gpt-4.1', `Bonjour from ${name}`),
        okFrames: openAIStreamFrames('gpt-4.1', ['Bon', 'jour']),
        errorBody: openAIErrorBody,
      });
      mocks[name] = await startMockUpstream(scripts[name].handler);
    }
  });
  after(async () => {
    for (const name of NAMES) await mocks[name].close();
  });
  beforeEach(() => {
    for (const name of NAMES) {
      mocks[name].requests.length = 0;
      scripts[name].script();
    }
  });
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  function start(overrides: Partial<ChatServiceOptions>): ChatService {
    const config = gatewayConfig(`
providers:
  holysheep: { type: openai, base_url: "${mocks.holysheep.url}/v1", exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 2, base_ms: 10, cap_ms: 3000 }, limits: { rpm: 60, concurrency: 10 } }
  openai: { type: openai, base_url: "${mocks.openai.url}/v1", exchange_rate: 7.3, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: holysheep }, { provider: openai }]
`);
    service = createChatService({ config, env: ENV, random: seededRandom(3), sleep: noSleep, ...overrides });
    return service;
  }

  it('acquires once per attempt, retries included, with the priority and the time left; releases each', async () => {
    const rec = recordingAdmission();
    scripts.holysheep.script(status(429, { 'retry-after': '1' }), ok);
    const { meta } = await start({ admission: rec.admission }).complete(ask(), { priority: 'BATCH', deadlineMs: 5000 });
    assert.equal(meta.provider, 'holysheep');
    assert.equal(rec.calls.length, 2);
    assert.ok(rec.calls.every((c) => c.deployment.key === 'holysheep/gpt-4.1' && c.priority === 'BATCH'));
    assert.ok(
      rec.calls.every((c) => c.maxWaitMs > 0 && c.maxWaitMs <= 5000),
      'bounded by the deadline',
    );
    assert.deepEqual(rec.calls[0]!.deployment.provider.settings.limits, { rpm: 60, concurrency: 10 }, 'the provider account limits travel with the deployment');
    assert.equal(rec.state.released, 2);
    assert.equal(typeof meta.queuedMs, 'number', 'the admission wait is reported (its length is not asserted: no timed assertions)');
  });

  it('NORMAL when the context names no priority', async () => {
    const rec = recordingAdmission();
    await start({ admission: rec.admission }).complete(ask());
    assert.equal(rec.calls[0]!.priority, 'NORMAL');
  });

  it('a stream holds its slot until its last chunk, not just its first', async () => {
    const rec = recordingAdmission();
    const stream = await start({ admission: rec.admission }).stream(ask({ stream: true }));
    assert.equal(rec.state.released, 0, 'the upstream is still streaming');
    await collect(stream.chunks);
    await stream.result;
    assert.equal(rec.state.released, 1);
  });

  it('a busy deployment is skipped for the next one; when all are busy: 503 with the soonest Retry-After', async () => {
    const busy = (key: string, seconds: number) => new HerdError('UNAVAILABLE', `upstream model ${key} is busy: no slot was free within 100 ms.`, { retryAfterSeconds: seconds });
    const rec = recordingAdmission((r) => (r.deployment.key === 'holysheep/gpt-4.1' ? busy(r.deployment.key, 7) : undefined));
    const { meta } = await start({ admission: rec.admission }).complete(ask());
    assert.equal(meta.provider, 'openai');
    assert.deepEqual(
      meta.attempts.map((a) => a.provider),
      ['openai'],
      'no attempt went to the busy one',
    );
    assert.equal(mocks.holysheep.requests.length, 0);
    await service!.close();

    const all = recordingAdmission((r) => busy(r.deployment.key, r.deployment.provider.name === 'openai' ? 3 : 7));
    await assert.rejects(start({ admission: all.admission }).complete(ask()), (err: unknown) => {
      assert.ok(err instanceof HerdError);
      assert.equal(err.code, 'UNAVAILABLE');
      assert.equal(err.retryAfterSeconds, 3);
      assert.match(
        err.message,
        /^The model `gpt-4\.1` is busy: no upstream had a free slot in time \(skipped: holysheep\/gpt-4\.1: upstream model holysheep\/gpt-4\.1 is busy: .*; openai\/gpt-4\.1: upstream model openai\/gpt-4\.1 is busy: .*\)\.$/,
      );
      return true;
    });
    assert.equal(mocks.openai.requests.length, 1, 'only the first service reached openai');
  });

  it('with the real admission: a second request queues behind a stream on a 1-slot model and reports its queue time', async () => {
    const limits = await createGatewayLimits(limitsConfigSchema.parse({ admission: { models: { 'holysheep/gpt-4.1': { concurrency: 1 } } } }));
    const svc = start({ admission: limits.admission });
    const stream = await svc.stream(ask({ stream: true }));
    const second = svc.complete(ask());
    await pause(60);
    assert.equal(mocks.holysheep.requests.length, 1, 'the second request waits for the slot');
    assert.equal(limits.admission.stats().models[0]!.waiting.NORMAL, 1);
    await collect(stream.chunks);
    const { meta } = await second;
    assert.equal(meta.provider, 'holysheep');
    assert.ok(meta.queuedMs! >= 50, `queued ${meta.queuedMs} ms`);
    assert.ok(meta.waitedMs >= meta.queuedMs!, 'queue time is waiting, not Herd overhead');
    assert.equal(limits.admission.stats().models[0]!.inFlight, 0);
    await limits.close();
  });

  it('a client abort while queued ends the request without any upstream call', async () => {
    const limits = await createGatewayLimits(limitsConfigSchema.parse({ admission: { concurrency: 1 } }));
    const svc = start({ admission: limits.admission });
    const stream = await svc.stream(ask({ stream: true }));
    const controller = new AbortController();
    const queued = svc.complete(ask(), { signal: controller.signal });
    await pause(20);
    controller.abort(new DOMException('client went away', 'AbortError'));
    await assert.rejects(queued, { name: 'AbortError', message: 'client went away' });
    assert.equal(mocks.holysheep.requests.length + mocks.openai.requests.length, 1);
    await collect(stream.chunks);
    assert.deepEqual(
      limits.admission.stats().models.map((m) => [m.inFlight, m.waiting.NORMAL]),
      [[0, 0]],
    );
    await limits.close();
  });
});
