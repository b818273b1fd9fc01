// A JSON nesting-depth limit on every JSON body (issue 35): 100,000-deep `tools[].function.parameters` on
// /v1/chat/completions and `tools[].input_schema` on /v1/messages get a 400 in the route's own dialect
// before any upstream work (the fake upstreams see nothing, and the breaker stays closed for the next
// ordinary request); a 100,000-deep KServe infer body gets Triton's 400.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { MAX_JSON_DEPTH } from '../../src/http/parse-json-body.ts';
import { anthropicMessage, openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { request } from '../e2e/start-test-server.ts';

const DEEP = 100_000;
const deep = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;

let openai: MockUpstream;
let anthropic: MockUpstream;
let herd: HerdServer;

before(async () => {
  openai = await startMockUpstream((_req, res) => sendJson(res, 200, openAICompletion('gpt-4.1', 'fine')));
  anthropic = await startMockUpstream((_req, res) => sendJson(res, 200, anthropicMessage('claude-sonnet-4.5', 'fine')));
  const dir = mkdtempSync(join(tmpdir(), 'herd-json-depth-'));
  const config = herdConfigSchema.parse({
    auth: { db: join(dir, 'keys.db') },
    billing: { ledger: `sqlite:${join(dir, 'ledger.db')}` },
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0 },
    serving: { model_repository: [resolve('test/fixtures/cache_repository')] },
    providers: {
      oai: { type: 'openai', base_url: `${openai.url}/v1`, api_key_env: 'DEPTH_OPENAI_KEY', retry: { attempts: 1 } },
      ant: { type: 'anthropic', base_url: anthropic.url, api_key_env: 'DEPTH_ANTHROPIC_KEY', retry: { attempts: 1 } },
    },
    models: {
      'gpt-4.1': { price: { input: 2, output: 8 }, deployments: [{ provider: 'oai' }] },
      'claude-sonnet-4.5': { price: { input: 3, output: 15 }, deployments: [{ provider: 'ant' }] },
    },
  });
  herd = await startHerd(config, { env: { ...process.env, DEPTH_OPENAI_KEY: 'sk-depth-openai', DEPTH_ANTHROPIC_KEY: 'sk-depth-anthropic' } });
});

after(async () => {
  await herd?.close();
  await openai?.close();
  await anthropic?.close();
});

const post = (path: string, text: string) => request(`${herd.httpUrl}${path}`, { method: 'POST', body: text, headers: { 'content-type': 'application/json' } });

function chatBody(parameters: string): string {
  return `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${parameters}}}]}`;
}

function messagesBody(schema: string): string {
  return `{"model":"claude-sonnet-4.5","max_tokens":16,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":${schema}}]}`;
}

describe('JSON nesting depth', () => {
  it('/v1/chat/completions: a 100,000-deep tool schema is an OpenAI 400, never sent, and the breaker stays closed', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await post('/v1/chat/completions', chatBody(deep(DEEP)));
      assert.equal(res.status, 400);
      const error = (res.json() as { error: { type: string; message: string } }).error;
      assert.equal(error.type, 'invalid_request_error');
      assert.match(error.message, new RegExp(`deeper than ${MAX_JSON_DEPTH} levels`));
      assert.equal(res.headers.get('x-herd-attempts'), '0');
    }
    assert.equal(openai.requests.length, 0, 'nothing reached the upstream');
    // Within the limit the same shape is an ordinary request, answered by the same (still closed) breaker.
    const ok = await post('/v1/chat/completions', chatBody(deep(MAX_JSON_DEPTH - 8)));
    assert.equal(ok.status, 200, ok.body.toString());
    assert.equal(openai.requests.length, 1);
  });

  it('/v1/messages: a 100,000-deep input_schema is an Anthropic 400, never sent', async () => {
    const res = await post('/v1/messages', messagesBody(deep(DEEP)));
    assert.equal(res.status, 400);
    const body = res.json() as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /deeper than/);
    assert.equal(anthropic.requests.length, 0, 'nothing reached the upstream');
    const ok = await post('/v1/messages', messagesBody(deep(MAX_JSON_DEPTH - 8)));
    assert.equal(ok.status, 200, ok.body.toString());
  });

  it('the limit counts arrays and objects, not brackets inside strings', async () => {
    const quoted = JSON.stringify('{['.repeat(DEEP));
    const res = await post('/v1/chat/completions', `{"model":"gpt-4.1","messages":[{"role":"user","content":${quoted}}]}`);
    assert.equal(res.status, 200, res.body.toString());
  });

  it('/v2 infer: a 100,000-deep body is a KServe 400', async () => {
    const res = await post('/v2/models/cached_counter/infer', `{"inputs":[{"name":"IN","datatype":"FP32","shape":[1,1],"data":[1]}],"parameters":{"deep":${deep(DEEP)}}}`);
    assert.equal(res.status, 400);
    const body = res.json() as { error: string };
    assert.equal(typeof body.error, 'string');
    assert.match(body.error, /deeper than/);
  });
});
