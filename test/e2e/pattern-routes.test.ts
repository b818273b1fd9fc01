// Pattern routes on the real server: ids an operator never listed (claude-opus-4-8, gpt-5-mini) reach
// the upstream as the client sent them, the matched rule is in x-herd-route (JSON and streams, OpenAI
// and Anthropic dialects) and the ledger's route_rule, a `match` price prices them, unknown ids get the
// client's dialect error, and GET /v1/models lists what the upstreams list (fetched once, then cached).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { anthropicMessage, openAICompletion, openAIStreamFrames } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { postJson, request } from './start-test-server.ts';

const MASTER = 'sk-herd-master-key-for-the-pattern-routes-0123456789';
const ENV = { RELAY_API_KEY: 'sk-upstream-relay', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_PATTERN_MASTER: MASTER };

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
function anthropicStream(model: string): string {
  return [
    event('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_s',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 1_000_000, output_tokens: 1 },
      },
    }),
    event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Bonjour' } }),
    event('content_block_stop', { type: 'content_block_stop', index: 0 }),
    event('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1_000_000 } }),
    event('message_stop', { type: 'message_stop' }),
  ].join('');
}

interface LedgerRow {
  model_requested: string;
  model: string;
  upstream_model: string;
  route_rule: string | null;
  price_source: string | null;
  cost_micros: number;
}

describe('pattern routes end to end', () => {
  let relay: MockUpstream;
  let anthropic: MockUpstream;
  let server: HerdServer;
  let dir: string;
  let db: string;
  const listCalls = { relay: 0, anthropic: 0 };

  before(async () => {
    relay = await startMockUpstream(async (req, res) => {
      if (req.method === 'GET' && req.url === '/v1/models') {
        listCalls.relay++;
        return sendJson(res, 200, { object: 'list', data: ['gpt-5', 'gpt-5-mini', 'gpt-4o', 'text-embedding-3-small'].map((id) => ({ id, object: 'model', owned_by: 'openai' })) });
      }
      const body = req.body as { model: string; stream?: boolean };
      if (body.stream) return sendSse(res, openAIStreamFrames(body.model, ['Bon', 'jour']));
      return sendJson(res, 200, openAICompletion(body.model, 'Bonjour'));
    });
    anthropic = await startMockUpstream((req, res) => {
      if (req.method === 'GET' && req.url.startsWith('/v1/models')) {
        listCalls.anthropic++;
        const data = ['claude-opus-4-8', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5'].map((id) => ({
          type: 'model',
          id,
          display_name: id,
          created_at: '2026-01-01T00:00:00Z',
        }));
        return sendJson(res, 200, { data, has_more: false, first_id: data[0]!.id, last_id: data.at(-1)!.id });
      }
      const body = req.body as { model: string; stream?: boolean };
      if (!body.stream) return sendJson(res, 200, anthropicMessage(body.model, 'Bonjour'));
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(anthropicStream(body.model));
    });
    dir = mkdtempSync(join(tmpdir(), 'herd-pattern-routes-'));
    db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_PATTERN_MASTER, db: "${db}" }
billing:
  currency: USD
  ledger: "sqlite:${db}"
  flush_interval_ms: 10
  prices:
    - { match: 'claude-opus-*', input: 5, output: 25, effective: 2026-01-01, source: opus list }
providers:
  relay: { type: openai, base_url: "${relay.url}/v1" }
  anthropic: { type: anthropic, base_url: "${anthropic.url}" }
models:
  claude:
    price: { input: 3, output: 15 }
    deployments: [{ provider: anthropic, upstream_model: '{model}' }]
  gpt:
    price: { input: 1.25, output: 10 }
    deployments: [{ provider: relay, upstream_model: '{model}' }]
  haiku:
    price: { input: 1, output: 5 }
    deployments: [{ provider: anthropic, upstream_model: claude-haiku-4-5 }]
routes:
  patterns:
    - { match: 'claude-*', model: claude }
    - { match: 'gpt-5*', model: gpt }
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
  });
  after(async () => {
    await server?.close();
    await relay?.close();
    await anthropic?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const openai = { authorization: `Bearer ${MASTER}` };
  const messagesHeaders = { 'x-api-key': MASTER, 'anthropic-version': '2023-06-01' };
  const chat = (model: string, stream = false) => postJson(`${server.httpUrl}/v1/chat/completions`, { model, stream, messages: [{ role: 'user', content: 'hi' }] }, openai);
  const messages = (model: string, stream = false) =>
    postJson(`${server.httpUrl}/v1/messages`, { model, stream, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, messagesHeaders);

  /** The ledger row of the request that asked for `requested`, once flushed. */
  async function rowOf(requested: string): Promise<LedgerRow> {
    for (;;) {
      const sqlite = new Database(db, { readonly: true });
      try {
        const row = sqlite
          .prepare('SELECT model_requested, model, upstream_model, route_rule, price_source, cost_micros FROM ledger_requests WHERE model_requested = ? ORDER BY started_at DESC')
          .get(requested) as LedgerRow | undefined;
        if (row !== undefined) return row;
      } finally {
        sqlite.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  it("OpenAI chat, JSON and stream: the client's id goes upstream, x-herd-route names the pattern", async () => {
    const json = await chat('gpt-5-mini');
    assert.equal(json.status, 200, json.body.toString());
    assert.equal(json.headers.get('x-herd-route'), 'pattern:gpt-5*');
    assert.equal(json.headers.get('x-herd-model'), 'gpt');
    assert.equal((relay.requests.at(-1)!.body as { model: string }).model, 'gpt-5-mini');

    const stream = await chat('gpt-5.1-codex', true);
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('x-herd-route'), 'pattern:gpt-5*');
    assert.match(stream.body.toString(), /Bon/);
    assert.equal((relay.requests.at(-1)!.body as { model: string }).model, 'gpt-5.1-codex');

    const row = await rowOf('gpt-5-mini');
    assert.deepEqual([row.model, row.upstream_model, row.route_rule, row.price_source], ['gpt', 'gpt-5-mini', 'pattern:gpt-5*', 'herd.yaml models.gpt.price']);
  });

  it('Anthropic Messages, JSON and stream: pass-through with the dated id, priced by the match entry, rule in the ledger', async () => {
    const json = await messages('claude-sonnet-4-5-20250929');
    assert.equal(json.status, 200, json.body.toString());
    assert.equal(json.headers.get('x-herd-route'), 'pattern:claude-*');
    assert.equal((anthropic.requests.at(-1)!.body as { model: string }).model, 'claude-sonnet-4-5-20250929');

    const stream = await messages('claude-opus-4-8', true);
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('x-herd-route'), 'pattern:claude-*');
    assert.match(stream.body.toString(), /event: message_stop/);
    assert.equal((anthropic.requests.at(-1)!.body as { model: string }).model, 'claude-opus-4-8');

    const opus = await rowOf('claude-opus-4-8');
    assert.deepEqual([opus.model, opus.upstream_model, opus.route_rule, opus.price_source], ['claude', 'claude-opus-4-8', 'pattern:claude-*', 'opus list']);
    assert.equal(opus.cost_micros, 30_000_000, '1M input at $5 + 1M output at $25');
    const sonnet = await rowOf('claude-sonnet-4-5-20250929');
    assert.equal(sonnet.price_source, 'herd.yaml models.claude.price');
  });

  it('an exact name is never a pattern route, even where a pattern would match it', async () => {
    const answer = await messages('haiku');
    assert.equal(answer.headers.get('x-herd-route'), 'model:haiku');
    assert.equal((anthropic.requests.at(-1)!.body as { model: string }).model, 'claude-haiku-4-5');
    assert.equal((await rowOf('haiku')).route_rule, 'model:haiku');
  });

  it("an id nothing matches gets the client's dialect 404, naming it", async () => {
    const viaChat = await chat('gemini-2.5-pro');
    assert.equal(viaChat.status, 404);
    const chatError = (viaChat.json() as { error: { code: string; message: string } }).error;
    assert.equal(chatError.code, 'model_not_found');
    assert.match(chatError.message, /^The model `gemini-2\.5-pro` does not exist/);
    const viaMessages = await messages('gemini-2.5-pro');
    assert.equal(viaMessages.status, 404);
    const messagesError = viaMessages.json() as { type: string; error: { type: string; message: string } };
    assert.equal(messagesError.error.type, 'not_found_error');
    assert.match(messagesError.error.message, /`gemini-2\.5-pro`/);
  });

  it('GET /v1/models: configured names, then the upstream-listed ids each pattern routes, in OpenAI and Anthropic shapes, fetched once', async () => {
    const ids = async () => ((await request(`${server.httpUrl}/v1/models`, { headers: openai })).json() as { data: Array<{ id: string }> }).data.map((m) => m.id);
    const expected = ['claude', 'gpt', 'haiku', 'claude-opus-4-8', 'claude-sonnet-4-5-20250929', 'claude-haiku-4-5', 'gpt-5', 'gpt-5-mini'];
    assert.deepEqual(await ids(), expected);
    const anthropicShape = await request(`${server.httpUrl}/v1/models?limit=1000`, { headers: messagesHeaders });
    const list = anthropicShape.json() as { data: Array<{ type: string; id: string }>; has_more: boolean; first_id: string; last_id: string };
    assert.deepEqual(
      list.data.map((m) => m.id),
      expected,
    );
    assert.ok(list.data.every((m) => m.type === 'model'));
    assert.equal(list.last_id, 'gpt-5-mini');
    assert.deepEqual(await ids(), expected);
    assert.equal(listCalls.relay, 1, 'the relay list was fetched once');
    assert.equal(listCalls.anthropic, 1, 'the Anthropic list was fetched once');
    assert.ok(anthropic.requests.some((r) => r.method === 'GET' && r.url === '/v1/models?limit=1000'));
  });
});
