// The seeded short fuzz run of each provider's SSE stream parser, through a local upstream (see stream-targets.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFuzzTarget } from './fuzz-target.ts';
import { STREAM_TARGETS } from './stream-targets.ts';

const SEED = 20261201;

for (const make of STREAM_TARGETS) {
  const target = make();
  test(`fuzz: ${target.name}`, async () => {
    const result = await runFuzzTarget(target, { seed: SEED, numRuns: 40 });
    assert.equal(result.failures, 0, `${result.counterexample}\n${result.error}`);
  });
}
