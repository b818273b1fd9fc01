// Whether a key may call a model: its own allowed models and, when it belongs to a team, the team's too
// (the tighter of the two wins, as for every other limit).
import { isModelAllowed } from './is-model-allowed.ts';
import type { KeyInfo } from './key-store.ts';

export function mayUseModel(key: Pick<KeyInfo, 'allowedModels' | 'team'>, model: string): boolean {
  return isModelAllowed(key, model) && (key.team === undefined || isModelAllowed(key.team, model));
}
