// Version folders of a model (numeric names only; others are ignored as Triton ignores them) and
// the version_policy that picks which of them load.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelVersionPolicy } from '../model-config/model-config.ts';

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

/**
 * The versions to load, ascending. `latest` takes the highest N; `specific` those listed that exist;
 * `all`, or a policy naming none of them, every version (Triton's model_lifecycle rule).
 */
export function selectVersions(policy: ModelVersionPolicy, available: readonly number[]): number[] {
  if (policy.latest) return available.slice(Math.max(0, available.length - policy.latest.num_versions));
  if (policy.specific) return available.filter((v) => policy.specific?.versions.includes(v));
  return [...available];
}
