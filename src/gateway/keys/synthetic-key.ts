// Keys that are not in the store — the master key, open mode's anonymous caller, serving.identity —
// built with the same shape as stored ones, so enforcement reads every principal the same way.
import type { AllowedModels, KeyInfo, KeyRole } from './key-store.ts';

export type SyntheticKeyFields = Pick<KeyInfo, 'id' | 'name'> & Partial<Omit<KeyInfo, 'id' | 'name'>> & { role?: KeyRole; allowedModels?: AllowedModels };

/** A frozen KeyInfo with no limits, budgets or restrictions beyond what `fields` sets. */
export function createSyntheticKey(fields: SyntheticKeyFields): KeyInfo {
  return Object.freeze({
    prefix: '',
    role: 'client' as const,
    allowedModels: '*' as const,
    budgets: [],
    timezone: 'UTC',
    alertThresholds: [],
    allowedCidrs: [],
    tags: [],
    metadata: {},
    capMaxTokens: false,
    ...fields,
  });
}
