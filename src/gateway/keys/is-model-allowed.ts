// The per-key model check, shared by every KeyStore implementation: exact names, '*' for all.
import type { KeyInfo } from './key-store.ts';

export function isModelAllowed(key: Pick<KeyInfo, 'allowedModels'>, model: string): boolean {
  return key.allowedModels === '*' || key.allowedModels.includes(model);
}
