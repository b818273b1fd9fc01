// Trace settings as Triton's trace manager keeps them: one global setting and per-model overrides,
// each a string list per key. Herd stores and answers them (TraceSetting RPC); it records no traces.
import { HerdError, invalidArg } from '../core/errors.ts';

/** Key to values, as the KServe trace extension carries them (`trace_level` may hold several). */
export type TraceSettingValues = Record<string, string[]>;

const GLOBAL_DEFAULTS: Readonly<TraceSettingValues> = {
  trace_level: ['OFF'],
  trace_rate: ['1000'],
  trace_count: ['-1'],
  log_frequency: ['0'],
  trace_file: [''],
  trace_mode: ['triton'],
};
const UPDATABLE = new Set(['trace_level', 'trace_rate', 'trace_count', 'log_frequency']);
const LEVELS = new Set(['OFF', 'TIMESTAMPS', 'TENSORS']);

export class TraceSettings {
  private global: TraceSettingValues = { ...GLOBAL_DEFAULTS };
  private readonly models = new Map<string, TraceSettingValues>();

  /** The effective settings of a model (its overrides over the global ones), or the global ones. */
  get(model?: string): TraceSettingValues {
    const own = model ? this.models.get(model) : undefined;
    return { ...this.global, ...own };
  }

  /**
   * Applies `update` (an empty list clears a model's override, or resets a global key to its default)
   * and answers the resulting settings.
   */
  update(update: TraceSettingValues, model?: string): TraceSettingValues {
    const validated = Object.entries(update).map(([key, values]) => [key, validateSetting(key, values)] as const);
    const target = model ? { ...this.models.get(model) } : { ...this.global };
    for (const [key, values] of validated) {
      if (values.length > 0) target[key] = values;
      else if (model) delete target[key];
      else target[key] = [...(GLOBAL_DEFAULTS[key] ?? [])];
    }
    if (model) this.models.set(model, target);
    else this.global = target;
    return this.get(model);
  }
}

function validateSetting(key: string, values: readonly string[]): string[] {
  if (key === 'trace_file') throw new HerdError('UNSUPPORTED', 'trace file location can not be updated through network protocol');
  if (key === 'trace_mode') throw new HerdError('UNSUPPORTED', 'trace mode can not be updated through network protocol');
  if (!UPDATABLE.has(key)) throw invalidArg(`unknown trace setting '${key}'`);
  if (values.length === 0) return [];
  if (key === 'trace_level') {
    if (values.includes('OFF') && values.length > 1) throw invalidArg("Expect only one trace level 'OFF' is specified");
    const unknown = values.find((v) => !LEVELS.has(v));
    if (unknown !== undefined) throw invalidArg(`unknown trace level '${unknown}', expected OFF, TIMESTAMPS or TENSORS`);
    return [...values];
  }
  if (values.length > 1) throw invalidArg(`expect only 1 value for '${key}'`);
  const value = values[0] ?? '';
  if (!/^-?\d+$/.test(value.trim())) throw invalidArg(`Unable to parse '${key}', got: ${value}`);
  return [String(Number(value))];
}
