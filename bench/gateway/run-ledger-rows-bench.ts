// The ledger's database write alone, in one process: this checkout's SqliteLedger / PostgresLedger against
// a baseline checkout's (--baseline DIR, its src/ run through tsx), in alternating rounds of the same
// single-attempt requests; reports wall and CPU µs per request and the rows each wrote per request.
// Usage: npx tsx bench/gateway/run-ledger-rows-bench.ts --baseline DIR [--rounds 6] [--requests 4000] [--postgres URL]
// Prints markdown; never part of `npm test`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { AttemptRow, Ledger, LedgerOptions, RequestRecord } from '../../src/gateway/billing/ledger.ts';

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const baselineDir = option('--baseline');
if (baselineDir === undefined) throw new Error('--baseline DIR (a checkout of the commit to compare with) is required');
const rounds = Number(option('--rounds') ?? 6);
const perRound = Number(option('--requests') ?? 4000);
const postgresUrl = option('--postgres');

interface Build {
  name: string;
  sqlite(file: string, options: LedgerOptions): Ledger;
  postgres(url: string, schema: string): Promise<Ledger>;
}

async function loadBuild(name: string, root: string): Promise<Build> {
  const sqlite = (await import(resolve(root, 'src/gateway/billing/sqlite-ledger.ts'))) as typeof import('../../src/gateway/billing/sqlite-ledger.ts');
  const postgres = (await import(resolve(root, 'src/gateway/billing/postgres-ledger.ts'))) as typeof import('../../src/gateway/billing/postgres-ledger.ts');
  return {
    name,
    sqlite: (file, options) => sqlite.SqliteLedger.open(file, options),
    postgres: (url, schema) => postgres.PostgresLedger.open({ url, schema, poolSize: 2, flushIntervalMs: 600_000 }),
  };
}

/** A request as the gateway records most of them: one attempt that answered, its tokens and cost the request's. */
function entry(i: number): { request: RequestRecord; attempts: AttemptRow[] } {
  const requestId = `${randomBytes(8).toString('hex')}-${i}`;
  const startedAt = Date.now();
  const usage = { promptTokens: 812, cachedPromptTokens: 0, cacheWriteTokens: 0, completionTokens: 64, reasoningTokens: 0, estimated: false };
  const money = { currency: 'CNY' as const, costMicros: 2136, usdMicros: 293, listUsdMicros: 2136 };
  return {
    request: {
      requestId,
      keyId: 'key_bench',
      keyName: 'bench',
      requestedModel: 'gpt-4.1',
      model: 'gpt-4.1',
      provider: 'bench',
      upstreamModel: 'gpt-4.1',
      ...usage,
      ...money,
      cacheHit: false,
      savedMicros: 0,
      status: 'ok',
      httpStatus: 200,
      priority: undefined,
      attempts: 1,
      latencyMs: 6.25,
      ttftMs: undefined,
      priceSource: 'herd.yaml',
      priceEffectiveAt: undefined,
      startedAt,
      finishedAt: startedAt + 6,
    },
    attempts: [
      {
        requestId,
        attempt: 1,
        model: 'gpt-4.1',
        provider: 'bench',
        upstreamModel: 'gpt-4.1',
        outcome: 'ok',
        httpStatus: 200,
        ...usage,
        ...money,
        latencyMs: 6,
        ttftMs: undefined,
        startedAt,
      },
    ],
  };
}

interface Sample {
  wallUs: number;
  cpuUs: number;
  requests: number;
}

/** Records `perRound` requests at once (the queue commits them in batches of maxBatchRows) and waits for every commit. */
async function round(ledger: Ledger): Promise<Sample> {
  const entries = Array.from({ length: perRound }, (_, i) => entry(i));
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  // PostgreSQL's record() stops waiting after 1 s (the rows stay queued): flush() is the end of the write.
  for (const e of entries) ledger.record(e.request, e.attempts).catch(() => undefined);
  await ledger.flush();
  const cpu = process.cpuUsage(cpu0);
  return { wallUs: (performance.now() - t0) * 1000, cpuUs: cpu.user + cpu.system, requests: perRound };
}

const fmt = (n: number, d = 1) => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const builds = [await loadBuild('baseline', baselineDir), await loadBuild('this build', '.')];

async function compare(title: string, open: (b: Build, n: number) => Promise<{ ledger: Ledger; rows: () => Promise<{ requests: number; attempts: number }> }>) {
  const samples = new Map<string, Sample[]>(builds.map((b) => [b.name, []]));
  const counts = new Map<string, { requests: number; attempts: number }>();
  const opened = await Promise.all(builds.map((b, n) => open(b, n)));
  for (let r = 0; r < rounds; r++) {
    // Alternate which build goes first, so neither always follows the other.
    for (const n of r % 2 === 0 ? [0, 1] : [1, 0]) samples.get(builds[n]!.name)!.push(await round(opened[n]!.ledger));
  }
  for (const [n, b] of builds.entries()) {
    counts.set(b.name, await opened[n]!.rows());
    await opened[n]!.ledger.close();
  }
  process.stdout.write(`\n## ${title}: ${rounds} rounds × ${fmt(perRound, 0)} single-attempt requests per build, alternating\n\n`);
  process.stdout.write('| build | wall µs/request (median round) | CPU µs/request (median round) | rows per request |\n| --- | ---: | ---: | ---: |\n');
  for (const b of builds) {
    const s = samples.get(b.name)!;
    const median = (f: (x: Sample) => number) => s.map(f).sort((x, y) => x - y)[Math.floor(s.length / 2)]!;
    const c = counts.get(b.name)!;
    process.stdout.write(
      `| ${b.name} | ${fmt(median((x) => x.wallUs / x.requests))} | ${fmt(median((x) => x.cpuUs / x.requests))} | ${fmt((c.requests + c.attempts) / c.requests, 2)} |\n`,
    );
  }
}

await compare('SQLite (WAL, synchronous=NORMAL), no spool: the batched database write', async (b) => {
  const file = join(mkdtempSync(join(tmpdir(), 'herd-rows-bench-')), 'herd.db');
  const ledger = b.sqlite(file, { flushIntervalMs: 600_000 });
  return {
    ledger,
    rows: async () => {
      const db = new Database(file, { readonly: true });
      const n = (t: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${t}`).get() as { n: number }).n;
      const result = { requests: n('ledger_requests'), attempts: n('ledger_attempts') };
      db.close();
      return result;
    },
  };
});

if (postgresUrl !== undefined) {
  const schemas: string[] = [];
  await compare('PostgreSQL (local), no spool: the batched database write', async (b, n) => {
    const schema = `herd_rows_bench_${process.pid}_${n}`;
    schemas.push(schema);
    const ledger = await b.postgres(postgresUrl, schema);
    return {
      ledger,
      rows: async () => {
        const client = new pg.Client({ connectionString: postgresUrl });
        await client.connect();
        const q = async (t: string) => Number((await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM "${schema}".${t}`)).rows[0]?.n);
        const result = { requests: await q('ledger_requests'), attempts: await q('ledger_attempts') };
        await client.end();
        return result;
      },
    };
  });
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
}
