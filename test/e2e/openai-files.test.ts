// OpenAI's Files API on a real Herd, driven by the official `openai` SDK: upload (a file stream and toFile),
// retrieve, list with cursor pages, content, delete; one key never sees another's files (the master key sees all);
// OpenAI's refusals for a wrong purpose, a missing file and the size and line limits; and a 50 MB upload, sent
// by curl from another process, that leaves the server's resident memory well below the file's size.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:net';
import { finished } from 'node:stream/promises';
import { promisify } from 'node:util';
import OpenAI, { toFile } from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';

const MASTER = 'sk-herd-master-key-for-the-files-tests-0123456789';
const ENV = { RELAY_API_KEY: 'sk-upstream-relay', HERD_FILES_MASTER: MASTER };
const LINE = (i: number) => `${JSON.stringify({ custom_id: `r${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4.1', messages: [] } })}\n`;

async function start(dir: string, batch: string, maxInputSize = 64 * 1024 * 1024): Promise<HerdServer> {
  const db = join(dir, 'herd.db');
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, http_max_input_size: ${maxInputSize} }
auth: { master_key_env: HERD_FILES_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
batch: ${batch}
providers:
  relay: { type: openai, base_url: "http://127.0.0.1:9/v1" }
models:
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments: [{ provider: relay }]
`,
    join(dir, 'herd.yaml'),
  );
  return startHerd(config, { env: ENV });
}

/** Polls until `done` holds; the bound only keeps a broken build from hanging the run. */
async function waitFor(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(done(), what);
}

const clientOf = (server: HerdServer, apiKey: string) => new OpenAI({ apiKey, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 });

describe('OpenAI Files API', () => {
  let dir: string;
  let server: HerdServer;
  let master: OpenAI;
  let alice: OpenAI;
  let bob: OpenAI;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herd-files-e2e-'));
    server = await start(dir, '{ files: { max_bytes: 60000000 }, max_lines: 2000 }');
    const keys = await TestKeys.open(`sqlite:${join(dir, 'herd.db')}`);
    alice = clientOf(server, (await keys.create({ name: 'alice', allowedModels: '*' })).secret);
    bob = clientOf(server, (await keys.create({ name: 'bob', allowedModels: '*' })).secret);
    await keys.close();
    master = clientOf(server, MASTER);
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uploads, retrieves, lists, reads back and deletes a batch file in the shapes the SDK expects', async () => {
    const path = join(dir, 'requests.jsonl');
    const text = LINE(1) + LINE(2) + LINE(3);
    writeFileSync(path, text);
    const created = await alice.files.create({ file: createReadStream(path), purpose: 'batch' });
    assert.match(created.id, /^file-[A-Za-z0-9]{24}$/);
    assert.equal(created.object, 'file');
    assert.equal(created.bytes, Buffer.byteLength(text));
    assert.equal(created.filename, 'requests.jsonl');
    assert.equal(created.purpose, 'batch');
    assert.equal(created.status, 'processed');
    assert.ok(Math.abs(created.created_at - Date.now() / 1000) < 60);
    assert.equal(created.expires_at, created.created_at + 30 * 86_400, "OpenAI's 30 days for batch files");
    assert.deepEqual(await alice.files.retrieve(created.id), created);
    assert.equal(await (await alice.files.content(created.id)).text(), text);

    const deleted = await alice.files.delete(created.id);
    assert.deepEqual(deleted, { id: created.id, object: 'file', deleted: true });
    await assert.rejects(alice.files.retrieve(created.id), (err: unknown) => err instanceof OpenAI.NotFoundError && /No such File object/.test(err.message));
    await assert.rejects(alice.files.delete(created.id), OpenAI.NotFoundError);
    assert.equal(
      readdirSync(join(dir, 'files')).some((name) => !name.startsWith('.')),
      false,
      'the bytes are gone from the folder beside the ledger',
    );
  });

  it("pages through a key's files with the SDK's cursor; another key sees none of them, the master key all", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await bob.files.create({ file: await toFile(Buffer.from(LINE(i)), `part-${i}.jsonl`), purpose: 'batch', expires_after: { anchor: 'created_at', seconds: 3600 } })).id,
      );
    }
    const first = await bob.files.list({ limit: 2 });
    assert.equal(first.data.length, 2);
    assert.equal(first.has_more, true);
    const seen: string[] = [];
    for await (const file of bob.files.list({ limit: 2, order: 'asc' })) seen.push(file.id);
    assert.deepEqual(seen, ids, 'every file once, oldest first, across three pages');
    const retrieved = await bob.files.retrieve(ids[0] as string);
    assert.equal(retrieved.expires_at, retrieved.created_at + 3600);

    const aliceSees: string[] = [];
    for await (const file of alice.files.list()) aliceSees.push(file.id);
    assert.deepEqual(
      aliceSees.filter((id) => ids.includes(id)),
      [],
    );
    await assert.rejects(alice.files.retrieve(ids[0] as string), OpenAI.NotFoundError);
    await assert.rejects(alice.files.content(ids[0] as string), OpenAI.NotFoundError);
    await assert.rejects(alice.files.delete(ids[0] as string), OpenAI.NotFoundError);
    const masterSees: string[] = [];
    for await (const file of master.files.list({ purpose: 'batch' })) masterSees.push(file.id);
    assert.deepEqual(
      ids.filter((id) => !masterSees.includes(id)),
      [],
    );
    assert.equal((await master.files.retrieve(ids[1] as string)).id, ids[1]);
  });

  it("answers OpenAI's 400s for a purpose other than batch and for a form without a file, and 401 without a key", async () => {
    await assert.rejects(
      alice.files.create({ file: await toFile(Buffer.from(LINE(1)), 'x.jsonl'), purpose: 'fine-tune' }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && err.param === 'purpose' && /'fine-tune' is not one of \['batch'\]/.test(err.message),
    );
    const form = new FormData();
    form.set('purpose', 'batch');
    const missing = await fetch(`${server.httpUrl}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${MASTER}` }, body: form });
    assert.equal(missing.status, 400);
    assert.deepEqual(((await missing.json()) as { error: unknown }).error, {
      message: "'file' is a required property",
      type: 'invalid_request_error',
      param: 'file',
      code: null,
    });
    const anonymous = await fetch(`${server.httpUrl}/v1/files`);
    assert.equal(anonymous.status, 401);
  });

  it('takes a 50 MB upload streaming: the server process grows by far less than the file', async () => {
    const path = join(dir, 'big.jsonl');
    const out = createWriteStream(path);
    const line = `${JSON.stringify({ custom_id: 'x', method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4.1', messages: [{ role: 'user', content: 'y'.repeat(50_000) }] } })}\n`;
    const lines = Math.ceil((50 * 1024 * 1024) / line.length);
    for (let i = 0; i < lines; i++) if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
    out.end();
    await finished(out);
    // curl runs in another process and streams from disk, so this process's memory is the server's alone.
    global.gc?.();
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const { stdout } = await promisify(execFile)(
      'curl',
      ['-sS', '-H', `Authorization: Bearer ${MASTER}`, '-F', 'purpose=batch', '-F', `file=@${path}`, `${server.httpUrl}/v1/files`],
      {
        maxBuffer: 1 << 20,
      },
    );
    clearInterval(sampler);
    const file = JSON.parse(stdout) as { id: string; bytes: number };
    assert.equal(file.bytes, lines * line.length);
    const growth = peak - before;
    assert.ok(growth < 20 * 1024 * 1024, `resident memory grew by ${(growth / 1048576).toFixed(1)} MB for a ${(file.bytes / 1048576).toFixed(0)} MB upload`);
    await master.files.delete(file.id);
  });
});

describe('OpenAI Files API limits', () => {
  let dir: string;
  let server: HerdServer;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herd-files-limits-'));
    // server.http_max_input_size is for JSON bodies: an upload is bounded by batch.files.max_bytes alone.
    server = await start(dir, '{ files: { max_bytes: 100000, dir: uploads }, max_lines: 3 }', 20_000);
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a file over batch.files.max_bytes (413) or batch.max_lines (400) and keeps nothing of it; server.http_max_input_size does not apply', async () => {
    const client = clientOf(server, MASTER);
    await assert.rejects(
      client.files.create({ file: await toFile(Buffer.alloc(150_000, 'x'), 'big.jsonl'), purpose: 'batch' }),
      (err: unknown) => err instanceof OpenAI.APIError && err.status === 413 && /maximum of 100000 bytes/.test(err.message),
    );
    await assert.rejects(
      client.files.create({ file: await toFile(Buffer.from(LINE(1) + LINE(2) + LINE(3) + LINE(4)), 'long.jsonl'), purpose: 'batch' }),
      (err: unknown) => err instanceof OpenAI.BadRequestError && /more than 3 requests/.test(err.message),
    );
    assert.deepEqual(readdirSync(join(dir, 'uploads')), [], 'batch.files.dir is relative to herd.yaml');
    const padded = (i: number) => `${LINE(i).trimEnd()}${' '.repeat(20_000)}\n`;
    const ok = await client.files.create({ file: await toFile(Buffer.from(padded(1) + padded(2) + padded(3)), 'ok.jsonl'), purpose: 'batch' });
    assert.ok(ok.bytes > 60_000);
    assert.equal(readdirSync(join(dir, 'uploads')).length, 1);
    assert.equal((await client.files.list()).data[0]?.id, ok.id);
  });

  it('refuses a purpose sent before the file without keeping the file, a body that is not multipart, and a malformed form', async () => {
    const auth = { authorization: `Bearer ${MASTER}` };
    const form = new FormData();
    form.set('purpose', 'assistants');
    form.set('file', new Blob([LINE(1)]), 'a.jsonl');
    const early = await fetch(`${server.httpUrl}/v1/files`, { method: 'POST', headers: auth, body: form });
    assert.equal(early.status, 400);
    assert.equal(((await early.json()) as { error: { param: string } }).error.param, 'purpose');
    const asJson = await fetch(`${server.httpUrl}/v1/files`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"purpose":"batch"}' });
    assert.equal(asJson.status, 400);
    assert.match(((await asJson.json()) as { error: { message: string } }).error.message, /multipart\/form-data/);
    const broken = await fetch(`${server.httpUrl}/v1/files`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'multipart/form-data; boundary=xyz' },
      body: '--xyz\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n{"a":1}\n',
    });
    assert.equal(broken.status, 400);
    assert.equal(readdirSync(join(dir, 'uploads')).filter((n) => !n.startsWith('.')).length, 1, 'only the file accepted above');
  });

  it('keeps nothing of an upload whose client goes away midway', async () => {
    const url = new URL(server.httpUrl);
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    const head = '--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--b\r\nContent-Disposition: form-data; name="file"; filename="a.jsonl"\r\n\r\n';
    socket.write(
      `POST /v1/files HTTP/1.1\r\nHost: herd\r\nAuthorization: Bearer ${MASTER}\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 1000000\r\n\r\n${head}`,
    );
    socket.write(LINE(1).repeat(200));
    const partial = () => readdirSync(join(dir, 'uploads')).filter((n) => n.startsWith('.partial-'));
    await waitFor(() => partial().length === 1, 'the upload is being written');
    socket.destroy();
    await waitFor(() => partial().length === 0, 'the partial file is removed');
  });
});

describe('OpenAI Files API without a ledger', () => {
  it("is not served: batch files live in the ledger's database, so /v1/files answers OpenAI's 404 as any unknown path", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-files-off-'));
    const config = parseHerdConfig(
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_FILES_MASTER, db: "${join(dir, 'keys.db')}" }
billing: { ledger: "off" }
providers:
  relay: { type: openai, base_url: "http://127.0.0.1:9/v1" }
models:
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments: [{ provider: relay }]
`,
      join(dir, 'herd.yaml'),
    );
    const server = await startHerd(config, { env: ENV });
    try {
      const res = await fetch(`${server.httpUrl}/v1/files`, { headers: { authorization: `Bearer ${MASTER}` } });
      assert.equal(res.status, 404);
      assert.deepEqual(((await res.json()) as { error: { message: string } }).error.message, 'Invalid URL (GET /v1/files)');
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
