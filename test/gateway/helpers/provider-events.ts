// Reading what a provider yielded in provider tests: its usage event, its chunk deltas, and the
// UpstreamError a call must fail with.
import assert from 'node:assert/strict';
import { UpstreamError } from '../../../src/gateway/protocol/upstream-error.ts';
import type { ProviderStreamEvent } from '../../../src/gateway/providers/provider.ts';

export const usageOf = (events: ProviderStreamEvent[]) => events.find((e): e is Extract<ProviderStreamEvent, { type: 'usage' }> => e.type === 'usage')?.usage;

export const deltasOf = (events: ProviderStreamEvent[]) => events.flatMap((e) => (e.type === 'chunk' ? [e.chunk.choices[0]!.delta] : []));

/** The UpstreamError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function failure(promise: Promise<unknown>): Promise<UpstreamError> {
  const err = await promise.then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof UpstreamError, String(err));
  return err;
}
