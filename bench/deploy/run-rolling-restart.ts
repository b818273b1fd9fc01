// The rolling-restart test from the command line (as root: it creates network namespaces):
//   node --import tsx bench/deploy/run-rolling-restart.ts [--seconds 60] [--concurrency 16] [--label before]
// Needs DATABASE_URL, REDIS_URL, HERD_TESTDATA (or ../shared/testdata), haproxy and redis-cli on the PATH.
// Writes bench/results/rolling-restart-<date>-<label>.md; exits 0 only when every criterion passed.
import { execSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatRollingReport } from './format-rolling-report.ts';
import { runRollingRestart } from './rolling-restart.ts';
import { Cleanups } from './rolling-stack.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '16' },
    'steady-seconds': { type: 'string', default: '10' },
    'gap-ms': { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '1' },
    label: { type: 'string', default: 'run' },
    out: { type: 'string' },
    subnet: { type: 'string', default: '10.213.0' },
    loopback: { type: 'boolean', default: false },
    'retry-on': { type: 'string' },
    retries: { type: 'string', default: '3' },
    note: { type: 'string' },
  },
});

const need = (name: string): string => {
  const v = process.env[name];
  if (!v) {
    process.stderr.write(`${name} is not set (e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/test REDIS_URL=redis://127.0.0.1:6379)\n`);
    process.exit(2);
  }
  return v;
};
const testdata = process.env.HERD_TESTDATA ?? resolve('../shared/testdata');
if (!existsSync(resolve(testdata, 'triton_model_repository', 'simple'))) {
  process.stderr.write(`${testdata}/triton_model_repository/simple not found: set HERD_TESTDATA\n`);
  process.exit(2);
}
const started = new Date();
const log = (line: string) => process.stderr.write(`[rr ${((Date.now() - started.getTime()) / 1000).toFixed(1)}s] ${line}\n`);
const cleanups = new Cleanups();
// Ctrl-C or a kill: the same cleanups as a normal end (namespaces, database, children), then exit.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.once(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: cleaning up`);
    void cleanups.runAll(log).finally(() => process.exit(130));
  });

const options = {
  databaseUrl: need('DATABASE_URL'),
  redisUrl: need('REDIS_URL'),
  testdata,
  subnet: values.subnet,
  loopback: values.loopback,
  retryOn: values['retry-on'],
  retries: Number(values.retries),
  rpm: 120,
  budgetMicros: 5_000_000,
  seconds: Number(values.seconds),
  concurrency: Number(values.concurrency),
  steadySeconds: Number(values['steady-seconds']),
  gapMs: Number(values['gap-ms']),
  rounds: Number(values.rounds),
  log,
};
const load = loadavg()
  .map((l) => l.toFixed(1))
  .join(' ');
const report = await runRollingRestart(options, cleanups);
const commit = execSync('git rev-parse --short HEAD').toString().trim();
const haproxy = execSync('haproxy -v').toString().split('\n')[0] ?? 'haproxy';
const date = started.toISOString().slice(0, 10);
const argv = process.argv.slice(2).join(' ');
const text = formatRollingReport(report, [
  `# Rolling restart behind HAProxy — ${date} (${values.label})`,
  '',
  `\`node --import tsx bench/deploy/run-rolling-restart.ts ${argv}\` at commit ${commit}, ${started.toISOString()}.`,
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, ${haproxy}; load average at start ${load} (shared with other work).`,
  ...(values.note ? ['', values.note] : []),
  '',
]);
const out = values.out ?? `bench/results/rolling-restart-${date}-${values.label}.md`;
writeFileSync(out, text);
process.stdout.write(text);
log(`wrote ${out}`);
process.exit(report.ok ? 0 : 1);
