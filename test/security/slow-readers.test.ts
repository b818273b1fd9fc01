// Streams that respect slow readers (issue 35): three clients open a 32 MB streamed answer and read
// nothing. Herd, a child process in front of a local fake upstream, must stop pulling the upstream while
// their sockets are full (the upstream cannot have sent everything), stay within a small memory bound,
// and, once the idle-reader timeout passes, cancel the upstream and write each stream's ledger row.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startMockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { killIfRunning, spawnHerd, stopHerd } from '../e2e/spawn-herd.ts';

const STREAM_BYTES = 32 * 1024 * 1024;
const CLIENTS = 3;
/** Memory the three unread streams may add to the server (the target is 20 MB; this bound leaves room for the allocator's noise). */
const RSS_BOUND_MB = 48;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssMb(pid: number): number {
  const line = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(line, 'the server process reports its RSS');
  return Number(line[1]) / 1024;
}

/** One chunk of about 1 KB of text, as OpenAI streams it. */
const CONTENT = 'the quick brown fox jumps over the lazy dog, '.repeat(22);
const CHUNK = `data: ${JSON.stringify({ id: 'c-slow', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { content: CONTENT }, finish_reason: null }] })}\n\n`;

test('three unread 32 MB streams: the upstream is paused, memory stays bounded, the idle reader is dropped and its ledger row written', async (t) => {
  /** Bytes each upstream stream has handed to its socket; the upstream honours backpressure itself, so this is what Herd took. */
  const sent: number[] = [];
  const upstream = await startMockUpstream(async (req, res) => {
    if ((req.body as { stream?: boolean }).stream !== true) {
      res.writeHead(400).end();
      return;
    }
    const index = sent.length;
    sent.push(0);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let closed = false;
    res.once('close', () => {
      closed = true;
    });
    const warmup = (req.body as { max_tokens?: number }).max_tokens === 1;
    const total = warmup ? CHUNK.length : STREAM_BYTES;
    while (!closed && (sent[index] as number) < total) {
      sent[index] = (sent[index] as number) + CHUNK.length;
      if (!res.write(CHUNK)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.on('drain', done).on('close', done);
        });
      }
    }
    if (!closed)
      res.end(
        `data: ${JSON.stringify({ id: 'c-slow', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`,
      );
  });
  t.after(() => upstream.close());

  const dir = mkdtempSync(join(tmpdir(), 'herd-slow-readers-'));
  const config = join(dir, 'herd.yaml');
  writeFileSync(
    config,
    `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, stream_idle_reader_ms: 8000 }
billing: { ledger: "sqlite:./herd.db", flush_interval_ms: 100 }
providers:
  fake: { type: openai, base_url: "${upstream.url}/v1", api_key_env: SLOW_UPSTREAM_KEY }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: fake }]
`,
  );
  const herd = await spawnHerd(config, { SLOW_UPSTREAM_KEY: 'sk-upstream-secret' });
  t.after(() => killIfRunning(herd));
  const pid = herd.child.pid as number;
  const { port } = new URL(herd.url);

  const body = (maxTokens: number) => JSON.stringify({ model: 'gpt-4.1', stream: true, max_tokens: maxTokens, messages: [{ role: 'user', content: 'a long answer please' }] });
  // One short stream read to its end first, so the code paths the slow ones take are loaded before the baseline.
  const warm = await fetch(`${herd.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body(1) });
  assert.equal(warm.status, 200);
  assert.match(await warm.text(), /\[DONE\]/);
  await sleep(200);
  const before = rssMb(pid);

  // Clients that send their request and never read: their sockets stay paused.
  const sockets: Socket[] = [];
  t.after(() => {
    for (const s of sockets) s.destroy();
  });
  for (let i = 0; i < CLIENTS; i++) {
    const socket = connect(Number(port), '127.0.0.1');
    socket.pause();
    const text = body(100_000);
    socket.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
    sockets.push(socket);
  }

  // Wait until every slow stream has started and the upstream has sent nothing for 1.5 s (paused), or has sent
  // everything (what a server without backpressure does: the assertions below then fail).
  let last = '';
  let since = Date.now();
  for (let i = 0; i < 1200; i++) {
    await sleep(100);
    const now = JSON.stringify(sent);
    if (now !== last) {
      last = now;
      since = Date.now();
    }
    const slowSent = sent.slice(1);
    if (slowSent.length === CLIENTS && slowSent.every((b) => b >= STREAM_BYTES)) break;
    if (slowSent.length === CLIENTS && Date.now() - since >= 1500) break;
  }
  const during = rssMb(pid);
  const slow = sent.slice(1);
  t.diagnostic(
    `RSS ${before.toFixed(1)} MB before, ${during.toFixed(1)} MB with ${CLIENTS} unread streams (+${(during - before).toFixed(1)} MB); upstream sent ${slow.map((b) => (b / 1048576).toFixed(2)).join(', ')} MB`,
  );
  assert.equal(slow.length, CLIENTS, 'every slow client reached the upstream');
  for (const bytes of slow) assert.ok(bytes < STREAM_BYTES, `the upstream was paused: it sent ${(bytes / 1048576).toFixed(1)} MB of ${STREAM_BYTES / 1048576} MB`);
  assert.ok(during - before <= RSS_BOUND_MB, `${CLIENTS} unread streams added ${(during - before).toFixed(1)} MB (bound ${RSS_BOUND_MB} MB)`);

  // The idle-reader timeout drops each client and cancels its upstream; the ledger gets a row for what was delivered.
  const db = new Database(join(dir, 'herd.db'), { readonly: true, fileMustExist: false });
  t.after(() => db.close());
  let rows: { status: string; completion_tokens: number }[] = [];
  for (let i = 0; i < 600 && rows.length < CLIENTS; i++) {
    await sleep(100);
    try {
      rows = db.prepare("SELECT status, completion_tokens FROM ledger_requests WHERE status = 'cancelled'").all() as typeof rows;
    } catch {
      rows = []; // the table appears with the first flush
    }
  }
  assert.equal(rows.length, CLIENTS, `one cancelled row per dropped stream; rows: ${JSON.stringify(db.prepare('SELECT status, completion_tokens FROM ledger_requests').all())}`);
  for (const row of rows) assert.ok(row.completion_tokens > 0, 'the row counts what was delivered');
  for (const s of sockets) {
    if (!s.destroyed) await new Promise((r) => s.once('close', r).resume());
  }
  await stopHerd(herd, 'SIGTERM');
});
