// The response cache is partitioned per gateway key by default: key B sending key A's exact request
// misses and goes upstream (it can neither read A's answer nor learn that A asked). `cache.scope: shared`
// is the operator's explicit choice to let every key hit every entry. Real server, real keys, over HTTP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-cache-scope-master-5d7f9b1c3e2a4c6e8a0d';
const ENV = { CACHE_SCOPE_MASTER: MASTER, CACHE_SCOPE_UPSTREAM: 'sk-upstream-cache-scope' };

describe('cache.scope', () => {
  let upstream: MockUpstream;
  let dir: string;
  let secretA: string;
  let secretB: string;
  let answers = 0;

  before(async () => {
    // Each upstream answer is distinct, so a test can tell whose answer a client got.
    upstream = await startMockUpstream((_req, res) => sendJson(res, 200, openAICompletion('gpt-test', `answer ${++answers}`)));
    dir = mkdtempSync(join(tmpdir(), 'herd-cache-scope-'));
    const store = await TestKeys.open(join(dir, 'keys.db'));
    secretA = (await store.create({ name: 'team-a', allowedModels: '*' })).secret;
    secretB = (await store.create({ name: 'team-b', allowedModels: '*' })).secret;
    await store.close();
  });
  after(async () => {
    await upstream?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function startWith(scope: string | undefined): Promise<HerdServer> {
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: CACHE_SCOPE_MASTER, db: "${join(dir, 'keys.db')}" }
billing: { ledger: off }
${scope === undefined ? '' : `cache: { scope: ${scope} }`}
providers:
  up: { type: openai, base_url: "${upstream.url}/v1", api_key_env: CACHE_SCOPE_UPSTREAM, timeout_ms: 2000 }
models:
  gpt-test:
    price: { input: 1, output: 2 }
    deployments: [{ provider: up }]
`,
      join(dir, 'herd.yaml'),
    );
    return startHerd(config, { env: ENV, log: () => undefined });
  }

  async function ask(server: HerdServer, secret: string, question: string): Promise<{ cache: string | null; text: string }> {
    const res = await fetch(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}` },
      body: JSON.stringify({ model: 'gpt-test', temperature: 0, messages: [{ role: 'user', content: question }] }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { choices: { message: { content: string } }[] };
    return { cache: res.headers.get('x-herd-cache'), text: body.choices[0]!.message.content };
  }

  /** The cache write runs after the answer is out: wait until key A's repeat is a hit. */
  async function untilStored(server: HerdServer, secret: string, question: string): Promise<{ cache: string | null; text: string }> {
    for (let i = 0; ; i++) {
      const again = await ask(server, secret, question);
      if (again.cache === 'hit' || i === 200) return again;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it("by default (scope key) another key's identical request misses and gets its own answer", async () => {
    const server = await startWith(undefined);
    try {
      const first = await ask(server, secretA, 'what is the default?');
      assert.equal(first.cache, 'miss');
      const repeat = await untilStored(server, secretA, 'what is the default?');
      assert.deepEqual(repeat, { cache: 'hit', text: first.text }, 'key A hits its own entry');
      const sent = upstream.requests.length;
      const other = await ask(server, secretB, 'what is the default?');
      assert.equal(other.cache, 'miss');
      assert.notEqual(other.text, first.text, "key B never gets key A's answer");
      assert.equal(upstream.requests.length, sent + 1, 'key B went upstream');
    } finally {
      await server.close();
    }
  });

  it('scope shared: every key hits every entry', async () => {
    const server = await startWith('shared');
    try {
      const first = await ask(server, secretA, 'what is shared?');
      assert.equal(first.cache, 'miss');
      await untilStored(server, secretA, 'what is shared?');
      const sent = upstream.requests.length;
      const other = await ask(server, secretB, 'what is shared?');
      assert.deepEqual(other, { cache: 'hit', text: first.text });
      assert.equal(upstream.requests.length, sent);
    } finally {
      await server.close();
    }
  });

  it('an unknown scope is a config error', () => {
    assert.throws(() => parseHerdConfig('cache: { scope: team }', join(dir, 'herd.yaml')), /scope/);
  });
});
