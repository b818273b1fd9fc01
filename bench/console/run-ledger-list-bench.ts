// The console's ledger queries on a 100k-request ledger (issue 30's target: p95 ≤ 100 ms per list shape),
// timed on a temp SQLite file and on PostgreSQL (DATABASE_URL; skipped without it). Never part of `npm test`.
// Usage: npm run bench:console-ledger -- [--rows 100000] [--rounds 200] [--tag NAME]; writes bench/results/console-ledger-<date>[-tag].md.
import { execSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import type { AttemptRow, Ledger, RequestRecord } from '../../src/gateway/billing/ledger.ts';
import { PostgresLedger } from '../../src/gateway/billing/postgres-ledger.ts';
import { encodeRequestCursor } from '../../src/gateway/billing/request-list-query.ts';
import { SqliteLedger } from '../../src/gateway/billing/sqlite-ledger.ts';

const TARGET_MS = 100;
const DAY = 86_400_000;
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const ROWS = Number(option('--rows') ?? 100_000);
const ROUNDS = Number(option('--rounds') ?? 200);
/** The 30-day aggregates (the daily rollup plus the edge days' rows): fewer rounds keep a run within minutes. */
const REPORT_ROUNDS = Number(option('--report-rounds') ?? 20);
const tag = option('--tag');
const url = process.env['DATABASE_URL'];
const NOW = Date.parse('2026-12-06T12:00:00Z');
const SINCE = NOW - 30 * DAY;

const MODELS = ['gpt-4.1', 'gpt-4.1-mini', 'claude-sonnet-4', 'claude-haiku', 'gemini-2.5-pro', 'deepseek-chat'];
const PROVIDERS = ['openai', 'openai', 'anthropic', 'anthropic', 'gemini', 'deepseek'];
const ALIASES = ['smart', 'fast', 'auto'];
const DIALECTS = [
  'openai-chat',
  'openai-chat',
  'openai-chat',
  'openai-chat',
  'openai-chat',
  'openai-chat',
  'anthropic-messages',
  'anthropic-messages',
  'openai-responses',
  'openai-completions',
];
const ERRORS = ['RATE_LIMITED', 'UPSTREAM_TIMEOUT', 'cancelled', 'failed', 'BUDGET_EXCEEDED'];

/** Deterministic pseudo-random (mulberry32), so both databases hold the same rows. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 30 days of traffic from 40 keys (8 teams): ~5% failures, 10% retried (two attempts in ledger_attempts), timestamps in whole seconds (ties). */
function* generate(rows: number): Generator<{ request: RequestRecord; attempts: AttemptRow[] }> {
  const rnd = random(42);
  for (let i = 0; i < rows; i++) {
    const m = Math.floor(rnd() * MODELS.length);
    const key = Math.floor(rnd() * 40);
    const failed = rnd() < 0.05;
    const status = failed ? (ERRORS[Math.floor(rnd() * ERRORS.length)] as string) : 'ok';
    const startedAt = SINCE + Math.floor((rnd() * 30 * DAY) / 1000) * 1000;
    const cost = failed ? 0 : Math.floor(rnd() * 50_000);
    const model = MODELS[m] as string;
    const request: RequestRecord = {
      requestId: `req_${i.toString(36).padStart(6, '0')}_${Math.floor(rnd() * 1e9).toString(36)}`,
      keyId: `key_${key}`,
      keyName: `key ${key}`,
      teamId: key % 5 === 0 ? undefined : `team_${key % 8}`,
      teamName: key % 5 === 0 ? undefined : `Team ${key % 8}`,
      dialect: DIALECTS[Math.floor(rnd() * DIALECTS.length)],
      requestedModel: rnd() < 0.3 ? (ALIASES[m % 3] as string) : model,
      model,
      provider: PROVIDERS[m],
      upstreamModel: model,
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
      cacheHit: rnd() < 0.03,
      savedMicros: 0,
      status,
      httpStatus: failed ? 429 : 200,
      priority: 'NORMAL',
      attempts: 1,
      latencyMs: 200 + rnd() * 2000,
      ttftMs: 120,
      priceSource: 'herd.yaml',
      priceEffectiveAt: undefined,
      startedAt,
      finishedAt: startedAt + 900,
    };
    const attempt = (n: number, outcome: string, charged: boolean): AttemptRow => ({
      requestId: request.requestId,
      attempt: n,
      model,
      provider: PROVIDERS[m] as string,
      upstreamModel: model,
      outcome,
      httpStatus: outcome === 'ok' ? 200 : 429,
      promptTokens: charged ? 1000 : 0,
      cachedPromptTokens: charged ? 200 : 0,
      cacheWriteTokens: 0,
      completionTokens: charged ? 300 : 0,
      reasoningTokens: 0,
      estimated: false,
      currency: request.currency,
      costMicros: charged ? cost : 0,
      usdMicros: charged ? cost : 0,
      listUsdMicros: charged ? cost : 0,
      latencyMs: 100,
      ttftMs: undefined,
      startedAt: startedAt + (n - 1) * 50,
    });
    if (rnd() < 0.1) {
      request.attempts = 2;
      yield { request, attempts: [attempt(1, 'rate_limited', false), attempt(2, failed ? 'rate_limited' : 'ok', true)] };
    } else yield { request, attempts: [attempt(1, failed ? 'rate_limited' : 'ok', true)] };
  }
}

async function seed(ledger: Ledger): Promise<{ ids: string[]; seconds: number }> {
  const t0 = performance.now();
  const ids: string[] = [];
  let pending: Promise<void>[] = [];
  // In start order, as a server appends them (rows finish roughly in the order they start).
  const entries = [...generate(ROWS)].sort((a, b) => a.request.startedAt - b.request.startedAt);
  for (const { request, attempts } of entries) {
    ids.push(request.requestId);
    // PostgreSQL's record() gives up waiting after 1 s under this burst; the rows stay queued and flush() writes them.
    pending.push(ledger.record(request, attempts).catch(() => undefined));
    if (pending.length === 2000) {
      await Promise.all(pending);
      pending = [];
    }
  }
  await Promise.all(pending);
  await ledger.flush();
  return { ids, seconds: (performance.now() - t0) / 1000 };
}

interface Shape {
  name: string;
  run: () => Promise<unknown>;
  /** An aggregate over the whole range: REPORT_ROUNDS rounds. */
  report?: boolean;
}

async function shapes(ledger: Ledger, ids: string[]): Promise<Shape[]> {
  // A deep page: the cursor of the row ~90% down the newest-first list.
  const all = await ledger.listRequests({ limit: 500, sinceMs: SINCE + 3 * DAY, untilMs: SINCE + 3 * DAY + 3_600_000 });
  const deepRow = all.rows.at(-1) as RequestRecord;
  const deep = encodeRequestCursor(deepRow);
  const list = (name: string, query: Parameters<Ledger['listRequests']>[0]): Shape => ({ name, run: () => ledger.listRequests(query) });
  const out: Shape[] = [
    list('list: first page (50)', { limit: 50 }),
    list('list: deep cursor page (~90% down)', { limit: 50, cursor: deep }),
    list('list: key', { limit: 50, keyId: 'key_7' }),
    list('list: key, deep cursor', { limit: 50, keyId: 'key_7', cursor: deep }),
    list('list: model (answered or requested)', { limit: 50, model: 'claude-haiku' }),
    list('list: model alias, deep cursor', { limit: 50, model: 'fast', cursor: deep }),
    list('list: status ok', { limit: 50, status: 'ok' }),
    list('list: status error', { limit: 50, status: 'error' }),
    list('list: status error, deep cursor', { limit: 50, status: 'error', cursor: deep }),
    list('list: status RATE_LIMITED', { limit: 50, status: 'RATE_LIMITED' }),
    list('list: dialect anthropic-messages', { limit: 50, dialect: 'anthropic-messages' }),
    list('list: since/until (one day)', { limit: 50, sinceMs: NOW - 10 * DAY, untilMs: NOW - 9 * DAY }),
    list('list: key + model + error + 7 days', { limit: 50, keyId: 'key_3', model: 'gpt-4.1', status: 'error', sinceMs: NOW - 7 * DAY }),
    list('list: first page (500)', { limit: 500 }),
  ];
  for (const by of ['day', 'model', 'provider', 'key', 'team'] as const) {
    out.push({ name: `usagePage by ${by}, 30 days`, run: () => ledger.usagePage({ sinceMs: SINCE, untilMs: NOW, by, limit: 100 }), report: true });
  }
  out.push({ name: 'usagePage by key, today', run: () => ledger.usagePage({ sinceMs: NOW - DAY / 2, untilMs: NOW, by: 'key', limit: 100 }) });
  out.push({ name: 'spendTotals, 30 days', run: () => ledger.spendTotals(SINCE, NOW), report: true });
  out.push({ name: 'spendTotals, today', run: () => ledger.spendTotals(NOW - DAY / 2, NOW) });
  let i = 0;
  out.push({ name: 'getRequest', run: () => ledger.getRequest(ids[(i += 7919) % ids.length] as string) });
  return out;
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
const fmt = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));

async function measure(label: string, ledger: Ledger, ids: string[], seconds: number): Promise<string[]> {
  const lines = [
    `## ${label}`,
    '',
    `${ROWS} requests seeded through record() in ${seconds.toFixed(1)} s; ${ROUNDS} rounds per shape (${REPORT_ROUNDS} for the 30-day aggregates), after 2 warm-up calls.`,
    '',
  ];
  lines.push('| query | rounds | p50 ms | p95 ms | max ms | rows | p95 ≤ 100 ms |', '| --- | ---: | ---: | ---: | ---: | ---: | :---: |');
  for (const shape of await shapes(ledger, ids)) {
    for (let i = 0; i < 2; i++) await shape.run();
    const times: number[] = [];
    let rows = 0;
    const rounds = shape.report ? REPORT_ROUNDS : ROUNDS;
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      const result = (await shape.run()) as { rows?: unknown[] } | unknown[] | undefined;
      times.push(performance.now() - t0);
      rows = Array.isArray(result) ? result.length : (result?.rows?.length ?? (result ? 1 : 0));
    }
    times.sort((a, b) => a - b);
    const p95 = pct(times, 95);
    const line = `| ${shape.name} | ${rounds} | ${fmt(pct(times, 50))} | ${fmt(p95)} | ${fmt(times.at(-1) as number)} | ${rows} | ${p95 <= TARGET_MS ? 'yes' : '**no**'} |`;
    lines.push(line);
    process.stdout.write(`${label}: ${line}\n`);
  }
  return [...lines, ''];
}

async function sqlite(): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-console-ledger-bench-'));
  try {
    const ledger = SqliteLedger.open(join(dir, 'herd.db'));
    try {
      const { ids, seconds } = await seed(ledger);
      return await measure('SQLite (temp file, WAL, no ANALYZE: as a server runs it)', ledger, ids, seconds);
    } finally {
      await ledger.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgres(): Promise<string[]> {
  if (!url) return ['## PostgreSQL', '', 'Skipped: DATABASE_URL is not set.', ''];
  const schema = `h_console_bench_${process.pid}`;
  const ledger = await PostgresLedger.open({ url, schema, poolSize: 4 });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const { ids, seconds } = await seed(ledger);
    // Autovacuum analyzes a table after this many inserts on its own; done here so the run does not depend on its timing.
    await admin.query(`ANALYZE "${schema}".ledger_requests`);
    await admin.query(`ANALYZE "${schema}".ledger_attempts`);
    const version = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
    return await measure(`PostgreSQL ${version} (127.0.0.1, pool of 4, after ANALYZE)`, ledger, ids, seconds);
  } finally {
    await ledger.close();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end();
  }
}

const started = new Date();
const commit = execSync('git rev-parse --short HEAD', { encoding: 'utf8' }).trim();
const cpu = cpus()[0]?.model ?? 'unknown';
const nproc = execSync('nproc', { encoding: 'utf8' }).trim();
const sections = [...(await sqlite()), ...(await postgres())];
const date = started.toISOString().slice(0, 10);
const out = resolve('bench/results', `console-ledger-${date}${tag ? `-${tag}` : ''}.md`);
const node = process.version;
const packageVersion = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
writeFileSync(
  out,
  [
    `# The console's ledger queries on ${ROWS} requests (${date})`,
    '',
    `Machine: ${nproc} CPUs (nproc), ${cpu}; Node ${node}; herd ${packageVersion}, commit ${commit}; started ${started.toISOString()}.`,
    `Command: \`npm run bench:console-ledger${args.length ? ` -- ${args.join(' ')}` : ''}\`. Target: p95 ≤ ${TARGET_MS} ms per shape (issue 30).`,
    'Rows: 30 days, 40 keys in 8 teams, 6 models (30% asked for by an alias), ~5% failures, 10% with two attempts, started_at in whole seconds (ties).',
    'Times are one call through the Ledger (SQL, driver, row conversion), sequential, in this process.',
    '',
    ...sections,
  ].join('\n'),
);
process.stdout.write(`wrote ${out}\n`);
