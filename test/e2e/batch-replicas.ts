// Two `herd serve` replicas on one throwaway PostgreSQL database (ledger, keys, batch store) sharing a batch files
// folder, each with its own ledger spool, for the batch durability tests that SIGKILL one and restart it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import pg from 'pg';
import { pause } from '../gateway/helpers/mock-upstream.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { createTestDatabase } from './create-test-database.ts';
import { killIfRunning, spawnHerd, type HerdProcess } from './spawn-herd.ts';

export const REPLICA_ENV = { DURABLE_MASTER: 'sk-herd-durable-batch-master-00000000000000000000', RELAY_API_KEY: 'sk-upstream-relay-durable' };

export interface BatchReplicas {
  database: pg.Client;
  /** The batch owner's gateway key, with a monthly budget (so each batch holds a reservation settled line by line). */
  secret: string;
  keyId: string;
  /** Starts (or restarts, on its own spool) replica `name`; it takes work as soon as it listens. */
  start(name: string): Promise<HerdProcess>;
  /** Every process started so far (the dead ones too). */
  all: HerdProcess[];
  close(): Promise<void>;
}

/** `batchYaml`: the `batch:` section's body and `providers`: the `providers:` section's, as herd.yaml text. */
export async function startBatchReplicas(prefix: string, batchYaml: string, providersYaml: string): Promise<BatchReplicas> {
  const db = await createTestDatabase(prefix);
  const dir = mkdtempSync(join(tmpdir(), `herd-${prefix}-`));
  // The key exists before either replica starts, so both know it without waiting for a re-read.
  const keys = await TestKeys.open(db.url);
  const { secret, key } = await keys.create({ name: 'batch-owner', allowedModels: '*', budgetMonthMicros: 1_000_000_000 });
  await keys.close();
  const database = new pg.Client({ connectionString: db.url });
  await database.connect();
  const all: HerdProcess[] = [];
  const configFor = (name: string) => {
    const file = join(dir, `herd-${name}.yaml`);
    writeFileSync(
      file,
      `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: DURABLE_MASTER, db: "${db.url}" }
billing: { ledger: "${db.url}", spool_dir: ./spool-${name}, flush_interval_ms: 50 }
batch:
  files: { dir: ./files }
${batchYaml}
providers:
${providersYaml}
models:
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments: [{ provider: relay }]
`,
    );
    return file;
  };
  return {
    database,
    secret,
    keyId: key.id,
    all,
    async start(name) {
      const herd = await spawnHerd(configFor(name), REPLICA_ENV);
      all.push(herd);
      return herd;
    },
    async close() {
      for (const herd of all) killIfRunning(herd);
      await Promise.all(all.map((h) => h.exited));
      await database.end();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const chatLine = (customId: string, content: string) =>
  `${JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4.1', messages: [{ role: 'user', content }], max_tokens: 20 } })}\n`;

/** Uploads `lines` chat requests (custom_id `c<i>`, content `line <tag> <i>`) and creates their batch on `herd`. */
export async function submitBatch(herd: HerdProcess, secret: string, tag: string, lines: number): Promise<string> {
  const client = new OpenAI({ apiKey: secret, baseURL: `${herd.url}/v1`, maxRetries: 0 });
  const text = Array.from({ length: lines }, (_, i) => chatLine(`c${i}`, `line ${tag} ${i}`)).join('');
  const file = await client.files.create({ file: await toFile(Buffer.from(text), `${tag}.jsonl`), purpose: 'batch' });
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  return batch.id;
}

/** Polls until `done` holds: liveness, not speed (a generous cap, then the last value in the failure). */
export async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, capMs = 60_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    assert.ok(Date.now() - started < capMs, `${what}: still not done after ${capMs} ms: ${JSON.stringify(value)}`);
    await pause(50);
  }
}

export interface LineRow {
  line_no: number;
  state: string;
  lease_owner: string | null;
  attempts: number;
}

export async function lineRows(database: pg.Client, batchId: string): Promise<LineRow[]> {
  // BIGINT and INTEGER columns come back from pg as strings.
  const { rows } = await database.query<{ line_no: string; state: string; lease_owner: string | null; attempts: string }>(
    'SELECT line_no, state, lease_owner, attempts FROM batch_lines WHERE batch_id = $1 ORDER BY line_no',
    [batchId],
  );
  return rows.map((r) => ({ ...r, line_no: Number(r.line_no), attempts: Number(r.attempts) }));
}

export interface LedgerLine {
  request_id: string;
  status: string;
  cost_micros: string;
}

export async function ledgerRows(database: pg.Client, batchId: string): Promise<LedgerLine[]> {
  const { rows } = await database.query<LedgerLine>('SELECT request_id, status, cost_micros FROM ledger_requests WHERE batch_id = $1 ORDER BY request_id', [batchId]);
  return rows;
}

export interface BatchBilling {
  /** The batch's reservation: open while it runs, released at its end. */
  state: string | undefined;
  /** Lines settled against it, and their sum. */
  parts: number;
  partsMicros: number;
}

export async function batchBilling(database: pg.Client, batchId: string): Promise<BatchBilling> {
  const reservation = await database.query<{ state: string }>('SELECT state FROM ledger_reservations WHERE request_id = $1', [batchId]);
  const parts = await database.query<{ n: string; micros: string | null }>(
    'SELECT COUNT(*) AS n, SUM(cost_micros) AS micros FROM ledger_reservation_parts WHERE reservation_id = $1',
    [batchId],
  );
  return { state: reservation.rows[0]?.state, parts: Number(parts.rows[0]?.n ?? 0), partsMicros: Number(parts.rows[0]?.micros ?? 0) };
}

/** The key's spend this month as its budget counts it, and the sum of its ledger rows: equal when each line was charged once. */
export async function spendAndRows(database: pg.Client, keyId: string): Promise<{ spend: number; rows: number }> {
  const spend = await database.query<{ micros: string | null }>("SELECT SUM(micros) AS micros FROM ledger_spend WHERE key_id = $1 AND period LIKE 'm:%'", [keyId]);
  const rows = await database.query<{ micros: string | null }>('SELECT SUM(cost_micros) AS micros FROM ledger_requests WHERE key_id = $1', [keyId]);
  return { spend: Number(spend.rows[0]?.micros ?? 0), rows: Number(rows.rows[0]?.micros ?? 0) };
}

/** A line owned by `herd` (its lease owner is `host:pid:…`). */
export const ownedBy = (herd: HerdProcess) => (row: LineRow) => row.lease_owner?.split(':')[1] === String(herd.child.pid);

export interface OutputLine {
  custom_id: string;
  response: { status_code: number; request_id: string; body: { choices: { message: { content: string } }[] } } | null;
  error: unknown;
}

/** The completed batch's output file, read through `herd` with the official SDK. */
export async function readOutput(herd: HerdProcess, secret: string, batchId: string): Promise<{ batch: OpenAI.Batch; lines: OutputLine[] }> {
  const client = new OpenAI({ apiKey: secret, baseURL: `${herd.url}/v1`, maxRetries: 0 });
  const batch = await client.batches.retrieve(batchId);
  assert.ok(batch.output_file_id, `batch ${batchId} has an output file`);
  const text = await (await client.files.content(batch.output_file_id)).text();
  return {
    batch,
    lines: text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as OutputLine),
  };
}

export interface HoldingGate {
  url: string;
  /** Resolves when the first download of a file's content has sent half its lines and is being held open. */
  holding: Promise<void>;
  close(): Promise<void>;
}

/**
 * A pass-through in front of an upstream that cuts the first file download short: it sends the first half of the
 * file's lines and then holds the response open (never ends it), as an upstream does to a poller that is killed
 * mid-read. Every later download passes whole.
 */
export async function startHoldingGate(target: string): Promise<HoldingGate> {
  const held = new Set<ServerResponse>();
  let hold: (() => void) | undefined;
  const holding = new Promise<void>((ok) => {
    hold = ok;
  });
  const server = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(name)) headers.set(name, value);
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const answer = await fetch(`${target}${req.url ?? ''}`, { method: req.method, headers, body });
      const bytes = Buffer.from(await answer.arrayBuffer());
      const type = answer.headers.get('content-type') ?? 'application/octet-stream';
      if (hold !== undefined && req.method === 'GET' && /\/files\/[^/]+\/content$/.test(req.url ?? '')) {
        const release = hold;
        hold = undefined;
        const lines = bytes.toString('utf8').split('\n').filter(Boolean);
        res.writeHead(answer.status, { 'content-type': type });
        res.write(`${lines.slice(0, Math.ceil(lines.length / 2)).join('\n')}\n`);
        held.add(res);
        release();
        return;
      }
      res.writeHead(answer.status, { 'content-type': type, 'content-length': bytes.length });
      res.end(bytes);
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(String(err));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holding,
    close: () =>
      new Promise<void>((ok) => {
        for (const res of held) res.destroy();
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
