// The seeded short fuzz run of the HTTP front ends through the real server on raw sockets (see http-targets.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFuzzTarget } from './fuzz-target.ts';
import { HTTP_TARGETS } from './http-targets.ts';

const SEED = 20261201;

for (const make of HTTP_TARGETS) {
  const target = make();
  test(`fuzz: ${target.name}`, async () => {
    const result = await runFuzzTarget(target, { seed: SEED, numRuns: 80 });
    assert.equal(result.failures, 0, `${result.counterexample}\n${result.error}`);
  });
}
