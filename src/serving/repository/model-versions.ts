// Version folders of a model (numeric names only; others are ignored as Triton ignores them) and
// the version_policy that picks which of them load.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelVersionPolicy } from './model-config.ts';

export function listVersionFolders(modelPath: string): number[] {
  let names: string[];
  try {
    names = readdirSync(modelPath);
  } catch {
    return [];
  }
  return names
    .filter((n) => /^[0-9]+$/.test(n) && statSync(join(modelPath, n)).isDirectory())
    .map(Number)
    .filter((v) => Number.isSafeInteger(v))
    .sort((a, b) => a - b);
}

/** The versions to load, ascending. `latest` takes the highest N; `specific` those listed that exist. */
export function selectVersions(policy: ModelVersionPolicy, available: readonly number[]): number[] {
  if (policy.all) return [...available];
  if (policy.specific) return available.filter((v) => policy.specific?.versions.includes(v));
  const n = policy.latest?.num_versions ?? 1;
  return available.slice(Math.max(0, available.length - n));
}
