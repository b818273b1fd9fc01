// The seeded short fuzz run of every in-process parser of outside bytes (bench/fuzz/run-fuzz.ts runs
// the same targets for longer): a failure prints the shrunk input; each one found has a regular test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFuzzTarget } from './fuzz-target.ts';
import { PARSER_TARGETS } from './parser-targets.ts';

const SEED = 20261201;

for (const make of PARSER_TARGETS) {
  const target = make();
  test(`fuzz: ${target.name}`, async () => {
    const result = await runFuzzTarget(target, { seed: SEED, numRuns: 100 });
    assert.equal(result.failures, 0, `${result.counterexample}\n${result.error}`);
  });
}
