// The model check shared by every caller: '*' allows all; else exact names, or `*`/`?` globs (`gpt-4o*`) as
// herd.yaml's pattern routes read them (src/config/parse-model-pattern.ts). A team's list applies as well.
import { isModelGlob, parseModelPattern } from '../../config/parse-model-pattern.ts';
import type { AllowedModels, KeyInfo } from './key-store.ts';

export function isModelAllowed(key: Pick<KeyInfo, 'allowedModels' | 'team'>, model: string): boolean {
  return allows(key.allowedModels, model) && (key.team === undefined || allows(key.team.allowedModels, model));
}

export function allows(list: AllowedModels, model: string): boolean {
  if (list === '*') return true;
  return list.some((entry) => (isModelGlob(entry) ? parseModelPattern(entry).test(model) : entry === model));
}
