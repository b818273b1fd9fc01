// A Messages request the way current clients send it — system turns mid-conversation, unknown members at
// every level, server tools, server tool blocks, search results — through the real server: an Anthropic
// upstream gets it byte for byte; bridged onto an OpenAI-compatible upstream it answers 200 naming what was
// dropped in x-herd-dropped; what cannot be dropped unnoticed, or anything on a strict route, is a 400 in
// Anthropic's error shape naming the member.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { anthropicMessage, openAICompletion, openAIStreamFrames } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

const MASTER = 'sk-herd-master-key-for-the-tolerant-messages-0123456';
const ENV = { RELAY_API_KEY: 'sk-upstream-relay', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_TEST_MASTER: MASTER };

/** What Claude Code and the newest SDKs send, and more: nothing here is refused on pass-through. */
const BODY = {
  model: 'claude-pass',
  max_tokens: 512,
  system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'Find the docs.' }] },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Search first.', signature: 'sig-1' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'herd docs' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [{ type: 'web_search_result', url: 'https://x', title: 'X', encrypted_content: 'e' }] },
        { type: 'text', text: 'Found them.', citations: [{ type: 'web_search_result_location', url: 'https://x' }] },
        { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.md' }, caller: { type: 'direct' } },
      ],
    },
    { role: 'system', content: 'The user prefers short answers.' },
    {
      role: 'user',
      future_member: { any: 'thing' },
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '# A' }], is_error: false },
        { type: 'search_result', source: 'https://x', title: 'X', content: [{ type: 'text', text: 'Result.' }] },
        { type: 'hologram_2027', beam: 'blue' },
        { type: 'text', text: 'Summarise.', cache_control: { type: 'ephemeral' } },
      ],
    },
  ],
  tools: [
    { name: 'read', description: 'Read a file', input_schema: { type: 'object' }, defer_loading: false, cache_control: { type: 'ephemeral' } },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
  ],
  thinking: { type: 'enabled', budget_tokens: 1024 },
  context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
  metadata: { user_id: 'user_abc_session_1', tier: 'gold' },
  client_extension: { version: 3 },
};
const DROPPED = [
  'messages.1.content.1',
  'messages.1.content.2',
  'messages.1.content.3',
  'messages.1.content.4.citations',
  'messages.1.content.5.caller',
  'messages.3.future_member',
  'messages.3.content.2',
  'metadata.tier',
  'tools.0.defer_loading',
  'tools.1',
  'context_management',
  'client_extension',
];

describe('tolerant Anthropic Messages ingress', () => {
  let anthropic: MockUpstream;
  let relay: MockUpstream;
  let server: HerdServer;
  let dir: string;

  before(async () => {
    anthropic = await startMockUpstream((req, res) => sendJson(res, 200, anthropicMessage((req.body as { model: string }).model, 'Short.')));
    relay = await startMockUpstream((req, res) => {
      const body = req.body as { stream?: boolean; model: string };
      if (body.stream) return sendSse(res, openAIStreamFrames(body.model, ['Short.']));
      return sendJson(res, 200, openAICompletion(body.model, 'Short.'));
    });
    dir = mkdtempSync(join(tmpdir(), 'herd-anthropic-tolerant-'));
    const db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  anthropic: { type: anthropic, base_url: "${anthropic.url}", timeout_ms: 2000, retry: { attempts: 1 } }
  relay: { type: openai, base_url: "${relay.url}/v1", api_key_env: RELAY_API_KEY, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  claude-pass:
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: anthropic, upstream_model: claude-up }]
  gpt-bridged:
    price: { input: 1.00, output: 2.00 }
    deployments: [{ provider: relay, upstream_model: gpt-up }]
  gpt-strict:
    strict: true
    price: { input: 1.00, output: 2.00 }
    deployments: [{ provider: relay, upstream_model: gpt-up }]
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
  });
  after(async () => {
    await server?.close();
    await anthropic?.close();
    await relay?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (body: Record<string, unknown>) =>
    fetch(`${server.httpUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': MASTER, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });
  const errorOf = async (res: Response) => (await res.json()) as { type: string; error: { type: string; message: string } };

  it('an Anthropic upstream receives the body byte for byte, the model replaced in place', async () => {
    const res = await post(BODY);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('x-herd-dropped'), null);
    // JSON.parse keeps key order, so this compares the text the upstream read.
    assert.equal(JSON.stringify(anthropic.requests.at(-1)?.body), JSON.stringify({ ...BODY, model: 'claude-up' }));
  });

  it('bridged onto an OpenAI-compatible upstream: 200, every dropped member named, system turns in place', async () => {
    const before = relay.requests.length;
    const res = await post({ ...BODY, model: 'gpt-bridged' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('x-herd-provider'), 'relay');
    assert.deepEqual(res.headers.get('x-herd-dropped')?.split(','), DROPPED);
    const message = (await res.json()) as { content: unknown };
    assert.deepEqual(message.content, [{ type: 'text', text: 'Short.' }]);
    assert.equal(relay.requests.length, before + 1);
    const sent = relay.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }>; tools: unknown[] } & Record<string, unknown>;
    assert.deepEqual(
      sent.messages.map((m) => m.role),
      ['system', 'user', 'assistant', 'system', 'tool', 'user'],
    );
    assert.deepEqual(sent.messages[3], { role: 'system', content: 'The user prefers short answers.' });
    assert.deepEqual(sent.messages[5]?.content, [
      { type: 'text', text: 'X\nhttps://x\n\nResult.' },
      { type: 'text', text: 'Summarise.' },
    ]);
    assert.equal(sent.tools.length, 1);
    for (const key of ['context_management', 'client_extension', 'metadata', 'thinking']) assert.equal(sent[key], undefined, key);
  });

  it('a bridged stream names the dropped members too', async () => {
    const res = await post({ ...BODY, model: 'gpt-bridged', stream: true });
    assert.equal(res.status, 200);
    assert.deepEqual(res.headers.get('x-herd-dropped')?.split(','), DROPPED);
    const text = await res.text();
    assert.match(text, /"text_delta","text":"Short\."/);
    assert.ok(text.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n'), text);
  });

  it('what cannot be dropped unnoticed is refused on a bridged route (400, Anthropic’s shape, naming it), yet passed through to Anthropic', async () => {
    const pdf = {
      ...BODY,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
            { type: 'text', text: 'Summarise.' },
          ],
        },
      ],
    };
    const before = relay.requests.length;
    const refused = await post({ ...pdf, model: 'gpt-bridged' });
    assert.equal(refused.status, 400);
    const body = await errorOf(refused);
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /^messages\.0\.content\.0: a PDF the canonical request cannot carry/);
    const forced = await post({ ...BODY, model: 'gpt-bridged', tool_choice: { type: 'tool', name: 'web_search' } });
    assert.equal(forced.status, 400);
    assert.match((await errorOf(forced)).error.message, /^tools\.1: tool_choice requires a tool only Anthropic can offer/);
    assert.equal(relay.requests.length, before, 'nothing reached the bridged upstream');
    const passed = await post(pdf);
    assert.equal(passed.status, 200);
    assert.equal(JSON.stringify(anthropic.requests.at(-1)?.body), JSON.stringify({ ...pdf, model: 'claude-up' }));
  });

  it('a strict route refuses what it would drop, naming the first', async () => {
    const res = await post({ ...BODY, model: 'gpt-strict' });
    assert.equal(res.status, 400);
    const body = await errorOf(res);
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /^messages\.1\.content\.1: the route is strict/);
    const clean = await post({
      model: 'gpt-strict',
      max_tokens: 10,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'ok' },
      ],
    });
    assert.equal(clean.status, 200, 'a request with nothing to drop still answers on a strict route');
    assert.equal(clean.headers.get('x-herd-dropped'), null);
  });
});
