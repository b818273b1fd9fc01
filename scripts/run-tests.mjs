// Runs every test/**/*.test.ts with node's test runner (Node 20's --test takes no globs).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    // test/clients has its own node_modules (the real-client suite's packages), whose tests are not ours.
    if (name === 'node_modules') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) collect(path, out);
    else if (name.endsWith('.test.ts')) out.push(path);
  }
  return out;
}
// Triton's example repository (../shared/testdata beside the checkout, or HERD_TESTDATA): the suites that serve
// it fail without it, so say at once why, instead of letting them fail on "unknown model".
const testdata = resolve(process.env.HERD_TESTDATA ?? resolve(dirname(fileURLToPath(import.meta.url)), '../../shared/testdata'), 'triton_model_repository');
if (!existsSync(testdata)) {
  process.stderr.write(
    `warning: ${testdata} does not exist: the suites that serve Triton's example models will fail. ` +
      'Put the shared folder beside this checkout, or set HERD_TESTDATA to its testdata folder.\n',
  );
}
// Tests never touch the user's data folder (./data, where herd.yaml's defaults put keys and the ledger):
// a test that forgets to point its config elsewhere fails the run here rather than writing rows there.
function listData(dir, out = new Map()) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    const stat = statSync(path);
    if (stat.isDirectory()) listData(path, out);
    else out.set(path, `${stat.size}:${stat.mtimeMs}`);
  }
  return out;
}
const dataBefore = listData('data');
const filter = process.argv.slice(2);
const files = collect('test', []).filter((f) => filter.length === 0 || filter.some((p) => f.includes(p)));
const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    '--test-concurrency=2',
    '--test-reporter=tap',
    '--test-reporter-destination=stdout',
    `--test-reporter=${resolve(dirname(fileURLToPath(import.meta.url)), 'failure-summary-reporter.mjs')}`,
    '--test-reporter-destination=stdout',
    ...files,
  ],
  { stdio: 'inherit' },
);
const touched = [...listData('data')].filter(([path, state]) => dataBefore.get(path) !== state).map(([path]) => path);
if (touched.length > 0) {
  process.stderr.write(`error: the tests wrote into ./data (${touched.join(', ')}): give every test config its own temporary ledger and key store.\n`);
  process.exit(1);
}
process.exit(result.status ?? 1);
