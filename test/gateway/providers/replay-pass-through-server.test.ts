// Pass-through end to end on recorded fixtures: Herd on a free port in front of upstreams replaying
// test/fixtures/<provider>/ bodies; a same-dialect client gets the recorded bytes, only the model renamed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHerd, type HerdServer } from '../../../src/app.ts';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { startMockUpstream, type MockUpstream } from '../helpers/mock-upstream.ts';
import { readFixture, replayFixture, type Fixture } from '../helpers/replay-fixture.ts';

const MASTER = 'sk-herd-master-key-for-the-replay-pass-through-0123';
const ENV = { ANTHROPIC_API_KEY: 'sk-upstream-ant', OPENAI_API_KEY: 'sk-upstream-openai', HERD_TEST_MASTER: MASTER };
const renamed = (text: string, from: string, to: string) => text.split(`"model":"${from}"`).join(`"model":"${to}"`).split(`"model": "${from}"`).join(`"model": "${to}"`);

describe('pass-through of recorded upstream bytes through the server', () => {
  let anthropic: MockUpstream;
  let openai: MockUpstream;
  let server: HerdServer;
  let dir: string;
  /** What each upstream replays next. */
  let anthropicAnswer: Fixture;
  let openaiAnswer: Fixture;

  before(async () => {
    anthropic = await startMockUpstream((_req, res) => replayFixture(res, anthropicAnswer));
    openai = await startMockUpstream((_req, res) => replayFixture(res, openaiAnswer));
    dir = mkdtempSync(join(tmpdir(), 'herd-replay-pass-through-'));
    const db = join(dir, 'herd.db');
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  anthropic: { type: anthropic, base_url: "${anthropic.url}", timeout_ms: 2000, retry: { attempts: 1 } }
  openai: { type: openai, base_url: "${openai.url}/v1", api_key_env: OPENAI_API_KEY, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  claude-public: { price: { input: 3.00, output: 15.00 }, deployments: [{ provider: anthropic, upstream_model: claude-sonnet-4-5-20250929 }] }
  gpt-public: { price: { input: 2.00, output: 8.00 }, deployments: [{ provider: openai, upstream_model: gpt-4.1-2025-04-14 }] }
`,
      join(dir, 'herd.yaml'),
    );
    server = await startHerd(config, { env: ENV });
  });
  after(async () => {
    await server?.close();
    await anthropic?.close();
    await openai?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const post = (path: string, body: Record<string, unknown>) =>
    fetch(`${server.httpUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    });

  it('a Messages client gets the recorded stream and message byte for byte, the model renamed', async () => {
    for (const file of ['messages-text.sse', 'messages-thinking.sse', 'messages-tool-use.sse']) {
      anthropicAnswer = readFixture('anthropic', file);
      const res = await post('/v1/messages', { model: 'claude-public', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(res.status, 200, file);
      assert.equal(await res.text(), renamed(anthropicAnswer.text, 'claude-sonnet-4-5-20250929', 'claude-public'), file);
    }
    anthropicAnswer = readFixture('anthropic', 'message.json');
    const res = await post('/v1/messages', { model: 'claude-public', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(await res.text(), renamed(anthropicAnswer.text, 'claude-sonnet-4-5-20250929', 'claude-public'));
  });

  it('a Messages client gets a recorded 529, and a recorded error event mid-stream, as Anthropic’s overloaded_error', async () => {
    anthropicAnswer = readFixture('anthropic', 'error-529-overloaded.json');
    const res = await post('/v1/messages', { model: 'claude-public', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    assert.ok(res.status >= 500, String(res.status));
    assert.equal(((await res.json()) as { type: string }).type, 'error');
    anthropicAnswer = readFixture('anthropic', 'messages-error-mid-stream.sse');
    const stream = await post('/v1/messages', { model: 'claude-public', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const text = await stream.text();
    // Whether Herd had committed the stream when the error came (an SSE error event) or not (an error body),
    // the client reads Anthropic's overloaded_error and never a message_stop.
    assert.match(text, /"type":"overloaded_error"/);
    assert.ok(!text.includes('message_stop'));
  });

  it('an OpenAI chat client gets the recorded chunks byte for byte, the model renamed', async () => {
    openaiAnswer = readFixture('openai', 'chat-text.sse');
    const res = await post('/v1/chat/completions', { model: 'gpt-public', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), renamed(openaiAnswer.text, 'gpt-4.1-2025-04-14', 'gpt-public'));
    openaiAnswer = readFixture('openai', 'chat-completion.json');
    const json = await post('/v1/chat/completions', { model: 'gpt-public', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(await json.text(), renamed(openaiAnswer.text, 'gpt-4.1-2025-04-14', 'gpt-public'));
  });
});
