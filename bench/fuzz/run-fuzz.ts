// Runs every fuzz target (test/fuzz) for a set time and prints a table of targets, inputs tried and
// failures, with the shrunk failing input. Usage: tsx bench/fuzz/run-fuzz.ts [--seconds N] [--seed S] [--only NAME]
import { parseArgs } from 'node:util';
import { ALL_FUZZ_TARGETS } from '../../test/fuzz/all-fuzz-targets.ts';
import { runFuzzTarget, type FuzzRunResult } from '../../test/fuzz/fuzz-target.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    seed: { type: 'string', default: String(Date.now() % 2 ** 31) },
    only: { type: 'string' },
  },
});
const seconds = Number(values.seconds);
const seed = Number(values.seed);
if (!(seconds > 0) || !Number.isInteger(seed)) {
  process.stderr.write('usage: run-fuzz.ts [--seconds N] [--seed S] [--only NAME]\n');
  process.exit(2);
}

const results: FuzzRunResult[] = [];
for (const make of ALL_FUZZ_TARGETS) {
  const target = make();
  if (values.only !== undefined && !target.name.includes(values.only)) continue;
  process.stderr.write(`${target.name}: ${seconds} s...\n`);
  results.push(await runFuzzTarget(target, { seed, timeLimitMs: seconds * 1000 }));
}

const rows = results.map((r) => [r.target, String(r.runs), String(Math.round(r.runs / (r.ms / 1000))), r.slowestMs.toFixed(1), r.rssGrowthMb.toFixed(1), String(r.failures)]);
const header = ['target', 'runs', 'runs/s', 'slowest input ms', 'RSS growth MB', 'failures'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join(' | ')} |`;
process.stdout.write(`seed ${seed}, ${seconds} s per target\n\n${line(header)}\n|${widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|\n`);
for (const row of rows) process.stdout.write(`${line(row)}\n`);
for (const r of results.filter((x) => x.failures > 0)) {
  process.stdout.write(`\n## ${r.target}\ninput: ${r.counterexample}\n${r.error}\n`);
}
process.exit(results.some((r) => r.failures > 0) ? 1 : 0);
