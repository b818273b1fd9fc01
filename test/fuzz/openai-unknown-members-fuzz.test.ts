// The seeded short fuzz run of tolerant OpenAI decoding (chat, Responses, completions): random unknown members at
// every level of valid requests are recorded, passed through as sent, and never make a bridged conversion fail
// with anything but a 4xx.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFuzzTarget } from './fuzz-target.ts';
import { createOpenAIUnknownMembersTarget } from './openai-unknown-members-target.ts';

const SEED = 20261206;

test('fuzz: openai chat, responses and completions with unknown members at every level', async () => {
  const result = await runFuzzTarget(createOpenAIUnknownMembersTarget(), { seed: SEED, numRuns: 150 });
  assert.equal(result.failures, 0, `${result.counterexample}\n${result.error}`);
});
