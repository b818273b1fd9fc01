// Checks and normalises what a caller asks a key to be, before any store sees it, so SQLite and a
// future Postgres store accept exactly the same names and model lists.
import { HerdError } from '../../core/errors.ts';
import type { AllowedModels, CreateKeyInput } from './key-store.ts';
import { quoteUntrusted } from './mask-key.ts';

const MAX_NAME_LENGTH = 100;
// Control characters in a name or model would corrupt the CLI's table and any log line.
const CONTROL = /[\u0000-\u001f\u007f]/;

export function validateCreateKeyInput(input: CreateKeyInput): CreateKeyInput {
  const name = input.name.trim();
  if (name === '') throw new HerdError('INVALID_ARG', 'a key needs a name (e.g. the team or service that will use it)', { param: 'name' });
  if (name.length > MAX_NAME_LENGTH) throw new HerdError('INVALID_ARG', `a key name may have at most ${MAX_NAME_LENGTH} characters, got ${name.length}`, { param: 'name' });
  if (CONTROL.test(name)) throw new HerdError('INVALID_ARG', 'a key name may not contain control characters', { param: 'name' });
  return { name, allowedModels: validateAllowedModels(input.allowedModels) };
}

function validateAllowedModels(models: AllowedModels): AllowedModels {
  if (models === '*') return '*';
  const names = [...new Set(models.map((m) => m.trim()))];
  if (names.length === 0 || names.some((m) => m === '')) {
    throw new HerdError('INVALID_ARG', "allowed models must be '*' or a list of model names, none of them empty", { param: 'allowedModels' });
  }
  if (names.includes('*')) {
    if (names.length === 1) return '*';
    throw new HerdError('INVALID_ARG', "'*' already allows every model: give it alone or list names without it", { param: 'allowedModels' });
  }
  const bad = names.find((m) => CONTROL.test(m) || m.includes(','));
  if (bad !== undefined) throw new HerdError('INVALID_ARG', `model name ${quoteUntrusted(bad)} may not contain commas or control characters`, { param: 'allowedModels' });
  return names;
}
