// SIGTERM drains as orchestrators need it (the real `herd serve` as a child process, a local fake upstream):
// readiness answers 503 at once while liveness stays 200, a kept-alive connection is still answered (with
// Connection: close), a stream in flight finishes with [DONE] after the listeners closed, its ledger row is
// written, the exit code is 0; a second SIGTERM exits at once with the ledger flushed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sendJson, startMockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { type HerdProcess, killIfRunning, spawnHerd } from './spawn-herd.ts';

const MASTER = 'sk-herd-drain-test-master-00000000000000000000000';
const ENV = { DRAIN_TEST_MASTER: MASTER, DRAIN_UPSTREAM_KEY: 'sk-upstream-secret' };

/** A fake OpenAI upstream: JSON answers at once; a stream sends its first chunk, then waits for release(). */
async function startHoldingUpstream() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const upstream = await startMockUpstream(async (req, res) => {
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!(req.body as { stream?: boolean }).stream) {
      sendJson(res, 200, {
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-4.1',
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
        usage,
      });
      return;
    }
    const chunk = (body: object) => `data: ${JSON.stringify({ id: 's', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', ...body })}\n\n`;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'o' }, finish_reason: null }] }));
    await released;
    res.end(`${chunk({ choices: [{ index: 0, delta: { content: 'k' }, finish_reason: 'stop' }] })}${chunk({ choices: [], usage })}data: [DONE]\n\n`);
  });
  return Object.assign(upstream, { release });
}

function writeConfig(upstreamUrl: string, server: string): { config: string; db: string } {
  const dir = mkdtempSync(join(tmpdir(), 'herd-drain-'));
  const config = join(dir, 'herd.yaml');
  writeFileSync(
    config,
    `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, ${server} }
auth: { master_key_env: DRAIN_TEST_MASTER, db: ./herd.db }
billing: { ledger: "sqlite:./herd.db", flush_interval_ms: 600000 }
providers:
  fake: { type: openai, base_url: "${upstreamUrl}/v1", api_key_env: DRAIN_UPSTREAM_KEY, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: fake }]
`,
  );
  return { config, db: join(dir, 'herd.db') };
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  reused: boolean;
}

function send(url: string, path: string, options: { agent?: Agent; body?: object } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = options.body ? JSON.stringify(options.body) : undefined;
    const req = request(
      `${url}${path}`,
      {
        method: payload ? 'POST' : 'GET',
        agent: options.agent ?? false,
        headers: payload ? { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` } : {},
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => {
          body += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, reused: req.reusedSocket }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const chat = (stream: boolean) => ({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }], ...(stream ? { stream: true } : {}) });

/** Resolves once the child has printed `text`. */
async function printed(herd: HerdProcess, text: string): Promise<void> {
  while (!herd.output().includes(text)) {
    if (herd.child.exitCode !== null) throw new Error(`herd exited before printing '${text}': ${herd.output()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A stream whose first chunk has arrived; `rest` resolves with everything once it ends. */
function openStream(url: string, agent: Agent | false = false): Promise<{ rest: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/chat/completions`, { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` } }, (res) => {
      let text = '';
      let first = true;
      // 'close', not 'end': a stream cut by the exit ends without one.
      const rest = new Promise<string>((done) => res.on('close', () => done(text)));
      res.on('data', (d: Buffer) => {
        text += d.toString();
        if (first) {
          first = false;
          resolve({ rest });
        }
      });
    });
    req.on('error', reject);
    req.end(JSON.stringify(chat(true)));
  });
}

const exitCode = (herd: HerdProcess) => herd.exited.then(() => herd.child.exitCode);

test('SIGTERM: readiness 503 at once, kept-alive connection answered with Connection: close, the stream finishes, ledger rows, exit 0', async (t) => {
  const upstream = await startHoldingUpstream();
  t.after(() => upstream.close());
  // The grace only has to outlast two local requests; nothing is measured against it.
  // Keep-alive connections idle for 10 minutes: the stream's, kept alive, must not hold the exit that long.
  const { config, db } = writeConfig(upstream.url, 'drain_grace_secs: 4, exit_timeout_secs: 600, limits: { keep_alive_timeout_ms: 600000 }');
  const herd = await spawnHerd(config, ENV, []);
  t.after(() => killIfRunning(herd));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  t.after(() => agent.destroy());

  assert.equal((await send(herd.url, '/v2/health/ready')).status, 200);
  const before = await send(herd.url, '/v1/chat/completions', { agent, body: chat(false) });
  assert.equal(before.status, 200);
  assert.notEqual(before.headers.connection, 'close');
  const streamAgent = new Agent({ keepAlive: true });
  t.after(() => streamAgent.destroy());
  const stream = await openStream(herd.url, streamAgent);

  herd.child.kill('SIGTERM');
  await printed(herd, 'SIGTERM received: draining');
  const ready = await send(herd.url, '/v2/health/ready');
  assert.equal(ready.status, 503);
  assert.deepEqual(JSON.parse(ready.body), { error: 'Server exiting' });
  assert.equal((await send(herd.url, '/v2/health/live')).status, 200, 'liveness stays 200 while draining');
  const during = await send(herd.url, '/v1/chat/completions', { agent, body: chat(false) });
  assert.equal(during.reused, true, 'sent on the kept-alive connection');
  assert.equal(during.status, 200);
  assert.equal(during.headers.connection, 'close');

  // The listeners close; the stream accepted before the signal still finishes.
  await printed(herd, 'drain grace over');
  upstream.release();
  const text = await (await stream).rest;
  assert.match(text, /data: \[DONE\]/);
  assert.equal(await exitCode(herd), 0);
  assert.match(herd.output(), /all requests answered; ledger flushed; exiting 0/);

  const ledger = new Database(db, { readonly: true });
  t.after(() => ledger.close());
  const rows = ledger.prepare('SELECT status FROM ledger_requests ORDER BY started_at').all() as { status: string }[];
  assert.deepEqual(
    rows.map((r) => r.status),
    ['ok', 'ok', 'ok'],
  );
});

test('a second SIGTERM exits at once, the ledger flushed first; the stream in flight is cut', async (t) => {
  const upstream = await startHoldingUpstream();
  t.after(() => {
    upstream.release();
    return upstream.close();
  });
  // Rows wait 10 minutes for the database: only the forced exit's flush writes the answered one.
  const { config, db } = writeConfig(upstream.url, 'drain_grace_secs: 600, exit_timeout_secs: 900');
  const herd = await spawnHerd(config, ENV, []);
  t.after(() => killIfRunning(herd));
  assert.equal((await send(herd.url, '/v1/chat/completions', { body: chat(false) })).status, 200);
  const stream = await openStream(herd.url);

  herd.child.kill('SIGTERM');
  await printed(herd, 'SIGTERM received: draining');
  herd.child.kill('SIGTERM');
  assert.equal(await exitCode(herd), 1);
  assert.match(herd.output(), /SIGTERM again: exiting now/);
  assert.doesNotMatch(await (await stream).rest, /\[DONE\]/);

  const ledger = new Database(db, { readonly: true });
  t.after(() => ledger.close());
  const rows = ledger.prepare('SELECT status FROM ledger_requests').all() as { status: string }[];
  assert.deepEqual(
    rows.map((r) => r.status),
    ['ok'],
  );
});
