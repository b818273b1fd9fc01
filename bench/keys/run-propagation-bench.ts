// Issue #28's "a change on one replica holds on every other within 1 s", measured (npm test only prints it):
// key store to key store (LISTEN/NOTIFY), then `herd serve` to `herd serve` through the admin API and /v1/me.
// Usage: node --import tsx bench/keys/run-propagation-bench.ts [--store-rounds 30] [--server-rounds 20] [--timeout 300] [--tag NAME]
// Needs DATABASE_URL (REDIS_URL optional); writes bench/results/keys-propagation-<date>[-tag].md. Never part of `npm test`.
import { execSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import pg from 'pg';
import { measureServerPropagation, type ServerRun } from './server-propagation.ts';
import { benchChildren, CHANGE_KINDS, measureStorePropagation, type Propagation } from './store-propagation.ts';

const TARGET_MS = 1000;
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const storeRounds = Number(option('--store-rounds') ?? 30);
const serverRounds = Number(option('--server-rounds') ?? 20);
const timeoutS = Number(option('--timeout') ?? 300);
const tag = option('--tag');
const url = process.env['DATABASE_URL'];
const redis = process.env['REDIS_URL'];
if (!url) {
  process.stderr.write('DATABASE_URL is not set (e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)\n');
  process.exit(2);
}

/** Past the time limit: kill the children and drop what this process created (its pid is in every name). */
const hardStop = setTimeout(() => {
  process.stderr.write(`run-propagation-bench: over --timeout ${timeoutS} s, stopping\n`);
  for (const child of benchChildren) child.kill('SIGKILL');
  void dropLeftovers().finally(() => process.exit(1));
}, timeoutS * 1000);

async function dropLeftovers(): Promise<void> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const dbs = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE datname LIKE $1', [`h_kbench_${process.pid}_%`]);
    for (const { datname } of dbs.rows) await c.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    const schemas = await c.query<{ nspname: string }>('SELECT nspname FROM pg_namespace WHERE nspname LIKE $1', [`h_kbench_store_${process.pid}_%`]);
    for (const { nspname } of schemas.rows) await c.query(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`);
  } finally {
    await c.end();
  }
}

const lines: string[] = [];
const say = (line = '') => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
const ms = (n: number) => (n < 10 ? n.toFixed(1) : Math.round(n).toString());
/** Nearest rank: with 20 rounds p95 is the 19th smallest. */
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;

function table(run: Propagation, withRatio: boolean): void {
  const extra = withRatio ? " max ÷ 1000 ms | from A's request start, p50 / max ms |" : '';
  say(`| change | n | min ms | p50 ms | p95 ms | max ms |${extra} A's own answer p50 ms |`);
  say(`| --- | ---: | ---: | ---: | ---: | ---: |${withRatio ? ' ---: | ---: |' : ''} ---: |`);
  for (const kind of CHANGE_KINDS) {
    const d = [...run.delays[kind]].sort((x, y) => x - y);
    const own = [...run.answered[kind]].sort((x, y) => x - y);
    if (d.length === 0) continue;
    const max = d[d.length - 1] as number;
    const total = [...run.fromStart[kind]].sort((x, y) => x - y);
    const ratio = withRatio ? ` ${(max / TARGET_MS).toFixed(3)} | ${ms(pct(total, 50))} / ${ms(total[total.length - 1] as number)} |` : '';
    say(`| ${kind} | ${d.length} | ${ms(d[0] as number)} | ${ms(pct(d, 50))} | ${ms(pct(d, 95))} | ${ms(max)} |${ratio} ${ms(pct(own, 50))} |`);
  }
  const all = CHANGE_KINDS.flatMap((k) => run.delays[k]).sort((x, y) => x - y);
  const max = all[all.length - 1] as number;
  const totals = CHANGE_KINDS.flatMap((k) => run.fromStart[k]).sort((x, y) => x - y);
  const allRatio = withRatio ? ` **${(max / TARGET_MS).toFixed(3)}** | ${ms(pct(totals, 50))} / ${ms(totals[totals.length - 1] as number)} |` : '';
  say(`| **all** | ${all.length} | ${ms(all[0] as number)} | ${ms(pct(all, 50))} | ${ms(pct(all, 95))} | **${ms(max)}** |${allRatio} |`);
}

async function postgresVersion(): Promise<string> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? '?';
  } finally {
    await c.end();
  }
}

const git = (cmd: string) => {
  try {
    return execSync(`git ${cmd}`, { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
};
const cpuModel = /model name\s*:\s*(.+)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpus()[0]?.model ?? '?';
const started = new Date();
const pgVersion = await postgresVersion();

process.stdout.write(`store level: ${storeRounds} rounds…\n`);
const store = await measureStorePropagation(url, storeRounds);
process.stdout.write(`server level: ${serverRounds} rounds…\n`);
const server: ServerRun = await measureServerPropagation(serverRounds, redis);
clearTimeout(hardStop);

const dirty = git('status --porcelain --untracked-files=no') === '' ? '' : ' (with uncommitted changes)';
const date = started.toISOString().slice(0, 10);
say(`# Key changes across replicas: propagation delay — ${date}`);
say();
say("Issue #28's target: a key created, rotated, blocked, unblocked or revoked on one replica holds on every other within 1 s.");
say();
say(
  `Machine: ${cpus().length} × ${cpuModel} (nproc ${execSync('nproc', { encoding: 'utf8' }).trim()}), Node ${process.version}, PostgreSQL ${pgVersion}, Redis ${redis ? 'on (limits.redis)' : 'off'}; all on one host, loopback. Load average at the end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}.`,
);
say(`Date: ${started.toISOString()}. Commit: ${git('rev-parse --short HEAD') || '?'} on ${git('rev-parse --abbrev-ref HEAD') || '?'}${dirty}.`);
say(
  `Command: \`DATABASE_URL=… REDIS_URL=… node --import tsx bench/keys/run-propagation-bench.ts --store-rounds ${storeRounds} --server-rounds ${serverRounds}${tag ? ` --tag ${tag}` : ''}\``,
);
say();
say(`## Store level: KeyStore A (this process) → KeyStore B (another process), ${storeRounds} rounds`);
say();
say(
  "One PostgreSQL schema; B is test/gateway/keys/fixtures/key-store-replica.ts polling its in-memory `lookup()` every 1 ms. Delay: from the start of the change's call on A to B's first sight of it (wall clock, one host). A's periodic re-read is off (60 s), B's is the default 5 s: what arrives sooner came by LISTEN/NOTIFY. Create is watched as `hasActiveKeys()` turning true (each round's revoke leaves no live key); rotate as the old secret turning `rotated` (grace 0).",
);
say();
table(store, false);
say();
say(`## Server level: \`herd serve\` A → \`herd serve\` B, ${serverRounds} rounds`);
say();
say(
  `One fresh PostgreSQL database for ledger and keys (auth.db defaults to it), dropped afterwards; Redis ${server.redis ? 'for limits' : 'not configured'}. Each change through A's admin API (master key, Idempotency-Key); from the moment A answered, B's \`GET /v1/me\` with the key is polled every 5 ms until it answers the change's status (create, rotate's new secret and unblock: 200; block: 403; revoke: 401). Delay: A's answer to B's first answer showing it, so it excludes A's own time (last column) and includes up to one poll interval plus one /v1/me round trip (polls per change: median ${pct(
    [...server.polls].sort((x, y) => x - y),
    50,
  )}, max ${Math.max(...server.polls)}).`,
);
say();
table(server.propagation, true);
say();
const serverMax = Math.max(...CHANGE_KINDS.flatMap((k) => server.propagation.delays[k]));
const firstPoll = server.polls.filter((n) => n === 1).length;
say(
  `In ${firstPoll} of ${server.polls.length} changes B's first /v1/me after A's answer already showed it: B had the change before A's answer reached the client, so those delays are one /v1/me round trip; the store level above is the propagation itself.`,
);
say();
say(
  `Target 1000 ms: the slowest change seen on B took ${ms(serverMax)} ms, ${(serverMax / TARGET_MS).toFixed(3)} of the bound${serverMax < TARGET_MS ? ' (held in every round)' : ' (**over the bound**)'}.`,
);
writeFileSync(resolve(`bench/results/keys-propagation-${date}${tag ? `-${tag}` : ''}.md`), `${lines.join('\n')}\n`);
