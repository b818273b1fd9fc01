// The soak with faults from the command line: `npx tsx bench/soak/run-soak.ts --seconds 120 [--out file.md]`.
// Needs DATABASE_URL (a PostgreSQL it may create a database on) and redis-server on the PATH.
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { formatSoakReport } from './format-soak-report.ts';
import { runSoak } from './soak.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '120' },
    concurrency: { type: 'string', default: '8' },
    out: { type: 'string' },
    note: { type: 'string' },
  },
});
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  process.stderr.write('DATABASE_URL is not set (e.g. DATABASE_URL=postgres://postgres@127.0.0.1:5432/test)\n');
  process.exit(2);
}
const started = new Date();
const load = loadavg()
  .map((l) => l.toFixed(1))
  .join(' ');
const report = await runSoak({
  seconds: Number(values.seconds),
  concurrency: Number(values.concurrency),
  databaseUrl,
  log: (line) => process.stderr.write(`[soak ${((Date.now() - started.getTime()) / 1000).toFixed(1)}s] ${line}\n`),
});
const commit = execSync('git rev-parse --short HEAD').toString().trim();
const text = formatSoakReport(report, [
  `# Soak with faults — ${started.toISOString().slice(0, 10)}`,
  '',
  `\`npx tsx bench/soak/run-soak.ts --seconds ${values.seconds} --concurrency ${values.concurrency}\` at commit ${commit}, ${started.toISOString()}.`,
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}; load average at start ${load}.`,
  ...(values.note ? ['', values.note] : []),
  '',
]);
process.stdout.write(text);
if (values.out) writeFileSync(values.out, text);
process.exit(report.invariants.every((r) => r.ok) ? 0 : 1);
