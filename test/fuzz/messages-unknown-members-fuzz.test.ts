// The seeded short fuzz run of tolerant Messages decoding: random unknown members at every level of valid
// requests are recorded, passed through as sent, and never make a bridged conversion fail with anything but a 4xx.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFuzzTarget } from './fuzz-target.ts';
import { createMessagesUnknownMembersTarget } from './messages-unknown-members-target.ts';

const SEED = 20261201;

test('fuzz: anthropic messages with unknown members at every level', async () => {
  const result = await runFuzzTarget(createMessagesUnknownMembersTarget(), { seed: SEED, numRuns: 100 });
  assert.equal(result.failures, 0, `${result.counterexample}\n${result.error}`);
});
