// Checks and normalises what a caller asks a key to be, before any store sees it, so SQLite and a
// future Postgres store accept exactly the same names, model lists and limits.
import { HerdError } from '../../core/errors.ts';
import { isPriority } from '../limits/priority.ts';
import type { AllowedModels, CreateKeyInput, KeyLimits } from './key-store.ts';
import { quoteUntrusted } from './mask-key.ts';

const MAX_NAME_LENGTH = 100;
// Control characters in a name or model would corrupt the CLI's table and any log line.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is this pattern's job
const CONTROL = /[\u0000-\u001f\u007f]/;

export function validateCreateKeyInput(input: CreateKeyInput): CreateKeyInput {
  const name = input.name.trim();
  if (name === '') throw new HerdError('INVALID_ARG', 'a key needs a name (e.g. the team or service that will use it)', { param: 'name' });
  if (name.length > MAX_NAME_LENGTH) throw new HerdError('INVALID_ARG', `a key name may have at most ${MAX_NAME_LENGTH} characters, got ${name.length}`, { param: 'name' });
  if (CONTROL.test(name)) throw new HerdError('INVALID_ARG', 'a key name may not contain control characters', { param: 'name' });
  return { name, allowedModels: validateAllowedModels(input.allowedModels), ...validateKeyLimits(input) };
}

/** Only the limits that are set, each checked: budgets are whole micro-units ≥ 0, rates whole numbers ≥ 1. */
export function validateKeyLimits(input: KeyLimits): KeyLimits {
  const limits: KeyLimits = {};
  const whole = (field: 'budgetDayMicros' | 'budgetMonthMicros' | 'rpm' | 'tpm' | 'maxConcurrency', min: number) => {
    const value = input[field];
    if (value === undefined) return;
    if (!Number.isSafeInteger(value) || value < min) {
      throw new HerdError('INVALID_ARG', `${field} must be a whole number of at least ${min}, got ${value}`, { param: field });
    }
    limits[field] = value;
  };
  whole('budgetDayMicros', 0);
  whole('budgetMonthMicros', 0);
  whole('rpm', 1);
  whole('tpm', 1);
  whole('maxConcurrency', 1);
  if (input.defaultPriority !== undefined) {
    if (!isPriority(input.defaultPriority)) {
      throw new HerdError('INVALID_ARG', `defaultPriority must be HIGH, NORMAL or BATCH, got ${JSON.stringify(input.defaultPriority)}`, { param: 'defaultPriority' });
    }
    limits.defaultPriority = input.defaultPriority;
  }
  return limits;
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
