// The daily rollup's cost on the ledger's write path: batches of 500 request rows written as the ledgers write
// them, with and without the rollup's upsert, interleaved on two fresh ledgers per database (same rows, same moment).
// Usage: npx tsx bench/console/run-rollup-write-bench.ts [--batches 60]; writes bench/results/console-rollup-write-<date>.md.
import { execSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { RequestRecord } from '../../src/gateway/billing/ledger.ts';
import { buildDailyUpsert } from '../../src/gateway/billing/ledger-daily.ts';
import { LEDGER_SCOPE, ledgerMigrations } from '../../src/gateway/billing/ledger-migrations.ts';
import { REQUEST_COLUMNS, convertRequestToRow, convertRequestToValues } from '../../src/gateway/billing/ledger-rows.ts';
import { applyPostgresMigrations } from '../../src/gateway/storage/apply-postgres-migrations.ts';
import { applySqliteMigrations } from '../../src/gateway/storage/apply-sqlite-migrations.ts';

const args = process.argv.slice(2);
const BATCHES = Number(args.includes('--batches') ? args[args.indexOf('--batches') + 1] : 60);
const BATCH = 500;
const DAY = 86_400_000;
const SINCE = Date.parse('2026-11-06T12:00:00Z');

/** The console bench's shape: 40 keys in 8 teams, 6 models, 30 days, ~5% failures. */
function batchOf(n: number): RequestRecord[] {
  return Array.from({ length: BATCH }, (_, j) => {
    const i = n * BATCH + j;
    const key = (i * 7919) % 40;
    const m = (i * 104_729) % 6;
    const startedAt = SINCE + ((i * 2_654_435_761) % (30 * DAY));
    const cost = (i * 31) % 50_000;
    return {
      requestId: `w_${i}`,
      keyId: `key_${key}`,
      keyName: `key ${key}`,
      teamId: key % 5 === 0 ? undefined : `team_${key % 8}`,
      teamName: key % 5 === 0 ? undefined : `Team ${key % 8}`,
      requestedModel: `model_${m}`,
      model: `model_${m}`,
      provider: `provider_${m % 4}`,
      upstreamModel: `model_${m}`,
      promptTokens: 1000,
      cachedPromptTokens: 200,
      cacheWriteTokens: 0,
      completionTokens: 300,
      reasoningTokens: 0,
      estimated: false,
      currency: key % 10 === 0 ? 'CNY' : 'USD',
      costMicros: cost,
      usdMicros: cost,
      listUsdMicros: cost,
      cacheHit: i % 33 === 0,
      savedMicros: 0,
      status: i % 20 === 0 ? 'RATE_LIMITED' : 'ok',
      httpStatus: i % 20 === 0 ? 429 : 200,
      priority: 'NORMAL',
      attempts: 1,
      ttftMs: undefined,
      priceSource: 'herd.yaml',
      priceEffectiveAt: undefined,
      latencyMs: 900,
      startedAt,
      finishedAt: startedAt + 900,
    };
  });
}

type Writer = (batch: RequestRecord[]) => Promise<void>;

/** sqlite-ledger.ts's writeEntries without attempts: inserts, then (rollup) the upsert of the inserted ids. */
function sqliteWriter(file: string, rollup: boolean): { write: Writer; close: () => void } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  applySqliteMigrations(db, LEDGER_SCOPE, ledgerMigrations);
  const insert = db.prepare(`INSERT INTO ledger_requests (${REQUEST_COLUMNS.join(', ')}) VALUES (${REQUEST_COLUMNS.map(() => '?').join(', ')}) ON CONFLICT DO NOTHING`);
  const rollUp = db.prepare(buildDailyUpsert('ledger_requests', 'request_id IN (SELECT value FROM json_each(?))'));
  const run = db.transaction((batch: RequestRecord[]) => {
    const ids: string[] = [];
    for (const r of batch) if (insert.run(convertRequestToValues(r)).changes === 1) ids.push(r.requestId);
    if (rollup && ids.length > 0) rollUp.run(JSON.stringify(ids));
  });
  return { write: async (batch) => run.immediate(batch), close: () => db.close() };
}

/** write-postgres-entries.ts's request statement, plain or wrapped in the rollup's CTE. */
async function postgresWriter(url: string, schema: string, rollup: boolean): Promise<{ write: Writer; close: () => Promise<void> }> {
  const pool = new pg.Pool({ connectionString: url, max: 1, options: `-c search_path="${schema}"` });
  await applyPostgresMigrations(pool, LEDGER_SCOPE, ledgerMigrations, schema);
  const plain = `INSERT INTO ledger_requests (${REQUEST_COLUMNS.join(', ')}) SELECT ${REQUEST_COLUMNS.join(', ')}
    FROM json_populate_recordset(NULL::ledger_requests, $1) ON CONFLICT DO NOTHING`;
  const sql = rollup ? `WITH inserted AS (${plain} RETURNING *) ${buildDailyUpsert('inserted', 'TRUE')}` : plain;
  const write: Writer = async (batch) => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(sql, [JSON.stringify(batch.map((r) => convertRequestToRow(r)))]);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  };
  return { write, close: () => pool.end() };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
const fmt = (ms: number) => (ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

/** Alternates which side goes first per batch, so drift in the host's load falls on both. */
async function compare(label: string, without: Writer, withRollup: Writer): Promise<string[]> {
  const times: Record<'without' | 'with', number[]> = { without: [], with: [] };
  for (let n = 0; n < BATCHES; n++) {
    const batch = batchOf(n);
    const order: ['without' | 'with', Writer][] = [
      ['without', without],
      ['with', withRollup],
    ];
    if (n % 2 === 1) order.reverse();
    for (const [side, write] of order) {
      const t = performance.now();
      await write(batch);
      times[side].push(performance.now() - t);
    }
  }
  const row = (side: 'without' | 'with') => {
    const sorted = [...times[side]].sort((a, b) => a - b);
    const total = sorted.reduce((s, x) => s + x, 0);
    return `| ${side === 'with' ? 'with the rollup' : 'without'} | ${BATCHES} | ${fmt(quantile(sorted, 0.5))} | ${fmt(quantile(sorted, 0.95))} | ${fmt(total / BATCHES)} | ${fmt((total / (BATCHES * BATCH)) * 1000)} |`;
  };
  return [`## ${label}`, '', '| writes | batches of 500 | p50 ms | p95 ms | mean ms | µs per row |', '| --- | ---: | ---: | ---: | ---: | ---: |', row('without'), row('with'), ''];
}

const started = new Date();
const dir = mkdtempSync(join(tmpdir(), 'herd-rollup-write-'));
const sections: string[] = [];
try {
  const a = sqliteWriter(join(dir, 'without.db'), false);
  const b = sqliteWriter(join(dir, 'with.db'), true);
  sections.push(...(await compare('SQLite (temp file, WAL, synchronous NORMAL)', a.write, b.write)));
  a.close();
  b.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const url = process.env['DATABASE_URL'];
if (url) {
  const schemas = [`bench_rollup_a_${process.pid}`, `bench_rollup_b_${process.pid}`];
  const a = await postgresWriter(url, schemas[0] as string, false);
  const b = await postgresWriter(url, schemas[1] as string, true);
  try {
    sections.push(...(await compare('PostgreSQL (127.0.0.1, one connection each)', a.write, b.write)));
  } finally {
    await a.close();
    await b.close();
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS "${s}" CASCADE`);
    await admin.end();
  }
}
const date = started.toISOString().slice(0, 10);
const out = resolve('bench/results', `console-rollup-write-${date}.md`);
const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
const header = [
  `# The daily rollup on the ledger's write path (${date})`,
  '',
  `Node ${process.version}; commit ${commit}; started ${started.toISOString()}; load average ${execSync('cat /proc/loadavg', { encoding: 'utf8' }).split(' ').slice(0, 3).join(' ')} at the end.`,
  `Command: \`npx tsx bench/console/run-rollup-write-bench.ts${args.length ? ` ${args.join(' ')}` : ''}\`. ${BATCHES} batches of ${BATCH} new request rows (30 days, 40 keys, 6 models),`,
  'each written to a ledger without the rollup and to one with it, alternating which goes first; the time of one batch transaction.',
  '',
];
writeFileSync(out, [...header, ...sections].join('\n'));
process.stdout.write(`wrote ${out}\n`);
