// bench/compat: runs Triton's example programs (client and python_backend checkouts) against one
// `herd serve` from dist/, inside a private network namespace, and writes docs/compatibility.md.
// Usage: node --import tsx bench/compat/run-compat.ts --client DIR --python-backend DIR [--protos DIR]
//   [--testdata DIR] [--python /usr/bin/python3] [--timeout 60] [--only TEXT] [--out docs/compatibility.md] [--no-build]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, hostname, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { EXAMPLES, otherLanguageExamples, unclassified, type CompatExample } from './compat-examples.ts';
import { startCompatHerd, type CompatHerd } from './compat-herd.ts';
import { assembleTritonclient, buildRepository, copyExampleRepository } from './compat-setup.ts';
import { keptPart, renderReport, writeReport } from './compatibility-report.ts';
import { runExample, type ExampleResult, type RunContext } from './run-example.ts';

const { values } = parseArgs({
  options: {
    client: { type: 'string' },
    'python-backend': { type: 'string' },
    protos: { type: 'string', default: 'src/grpc/protos' },
    testdata: { type: 'string', default: process.env.HERD_TESTDATA ?? '../shared/testdata' },
    python: { type: 'string', default: '/usr/bin/python3' },
    timeout: { type: 'string', default: '60' },
    only: { type: 'string' },
    out: { type: 'string', default: 'docs/compatibility.md' },
    'no-build': { type: 'boolean', default: false },
  },
});
if (!values.client || !values['python-backend']) {
  console.error('usage: run-compat.ts --client <client checkout> --python-backend <python_backend checkout> [options]');
  process.exit(2);
}
const checkouts = { client: resolve(values.client), python_backend: resolve(values['python-backend']) };
const INSIDE = 'HERD_COMPAT_NETNS';

/**
 * The examples dial localhost:8000/8001/8002 (several have no flag to change it), so Herd must own those
 * ports: a fresh network namespace (loopback only) gives them without touching the host's, and keeps
 * every byte of the run on 127.0.0.1.
 */
function reexecInNamespace(): never | undefined {
  if (process.env[INSIDE]) return undefined;
  // As root a network namespace alone; otherwise inside a user namespace that maps the caller to root.
  const flags = process.getuid?.() === 0 ? ['-n'] : ['-rn'];
  if (spawnSync('unshare', [...flags, 'true']).status !== 0) {
    console.error('unshare -n is not available: running in the host namespace (ports 8000-8002 must be free)');
    return undefined;
  }
  if (!values['no-build']) execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  const self = [process.execPath, ...process.execArgv, ...process.argv.slice(1), '--no-build'];
  const run = spawnSync('unshare', [...flags, 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', ...self], {
    stdio: 'inherit',
    env: { ...process.env, [INSIDE]: '1' },
  });
  process.exit(run.status ?? 1);
}

function commitOf(dir: string): string {
  try {
    const [hash, date] = execFileSync('git', ['-C', dir, 'log', '-1', '--format=%H %cs']).toString().trim().split(' ');
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no']).toString().trim() ? ', with local changes' : '';
    return `\`${hash}\` (${date}${dirty})`;
  } catch {
    return 'not a git checkout';
  }
}

/** Runs examples one after another against one Herd, putting its models back after each. */
async function runAgainst(herd: CompatHerd, examples: [CompatExample, number][], ctx: RunContext, results: ExampleResult[]): Promise<void> {
  try {
    for (const [example, i] of examples) {
      const r = await runExample(example, i, ctx);
      results.push(r);
      console.log(`${r.verdict.padEnd(7)} ${example.checkout}/${example.path} ${example.protocol} ${(example.args ?? []).join(' ')} ${r.detail}`);
      await herd.restore();
    }
  } finally {
    await herd.stop();
  }
}

async function main(): Promise<void> {
  reexecInNamespace();
  if (!values['no-build']) execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  const scratch = mkdtempSync(join(tmpdir(), 'herd-compat-'));
  const pythonPath = assembleTritonclient(checkouts.client, resolve(values.protos), join(scratch, 'pylib'));
  const tritonExamples = join(resolve(values.testdata), 'triton_model_repository');
  const repository = join(scratch, 'models');
  buildRepository({ tritonExamples, pythonBackend: checkouts.python_backend }, repository);
  const ctx: RunContext = { python: values.python, pythonPath, checkouts, scratch, protos: resolve(values.protos), timeoutMs: Number(values.timeout) * 1000 };
  const catalogue = [...EXAMPLES, ...otherLanguageExamples(checkouts.client)];
  const chosen = catalogue.map((e, i) => [e, i] as [CompatExample, number]).filter(([e]) => !values.only || `${e.checkout}/${e.path} ${e.protocol}`.includes(values.only));
  const results: ExampleResult[] = [];
  const shared = chosen.filter(([e]) => !e.exampleRepository || e.skip);
  if (shared.length) await runAgainst(await startCompatHerd(repository, values.python, join(scratch, 'herd.log'), true), shared, ctx, results);
  for (const [example, i] of chosen.filter(([e]) => e.exampleRepository && !e.skip)) {
    const own = join(scratch, `example-repository-${i}`);
    copyExampleRepository(tritonExamples, own, example.exampleRepository?.omit ?? []);
    await runAgainst(await startCompatHerd(own, values.python, join(scratch, `herd-${i}.log`), false), [[example, i]], ctx, results);
  }
  results.sort((a, b) => catalogue.indexOf(a.example) - catalogue.indexOf(b.example));
  // The scratch folder (tritonclient, repositories, Herd's logs) stays only when there is a failure to read.
  if (results.some((r) => r.verdict === 'fail' || r.verdict === 'timeout')) console.log(`Herd's logs: ${scratch}/herd*.log`);
  else rmSync(scratch, { recursive: true, force: true });
  if (values.only) return; // a partial run prints, and leaves the table alone
  const facts = {
    date: new Date().toISOString().slice(0, 10),
    machine: `${hostname()}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`,
    timeoutSeconds: Number(values.timeout),
    isolation: process.env[INSIDE] ? 'Herd and the examples in a private network namespace (loopback only)' : 'host network namespace',
    commits: [
      ['triton-inference-server/client', commitOf(checkouts.client)],
      ['triton-inference-server/python_backend', commitOf(checkouts.python_backend)],
      [`gRPC protos: ${values.protos}`, commitOf(resolve(values.protos))],
      ['Herd', commitOf('.')],
    ] as [string, string][],
  };
  const missing = [...unclassified('client', checkouts.client), ...unclassified('python_backend', checkouts.python_backend)];
  const out = resolve(values.out);
  writeReport(out, renderReport(results, missing, facts, keptPart(out, '')));
  console.log(`wrote ${out}`);
}

await main();
