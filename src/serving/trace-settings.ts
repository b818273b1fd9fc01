// Trace settings as Triton's trace manager keeps them: one global setting and per-model overrides,
// each a string list per key. One store answers both the gRPC TraceSetting RPC and HTTP
// /v2[/models/{m}]/trace/setting; the transports only convert their wire form. Herd records no traces.
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
/** The keys a client may update; Triton ignores any other key (trace_file is refused). */
export const UPDATABLE_TRACE_SETTINGS = ['trace_level', 'trace_rate', 'trace_count', 'log_frequency'] as const;
const INT32_MAX = 2 ** 31 - 1;
const UINT32_MAX = 2 ** 32 - 1;
/** Triton's TraceManager::MIN_TRACE_COUNT_VALUE: -1 means no limit. */
const MIN_TRACE_COUNT = -1;

export class TraceSettings {
  private global: TraceSettingValues = { ...GLOBAL_DEFAULTS };
  private readonly models = new Map<string, TraceSettingValues>();

  /** The effective settings of a model (its overrides over the global ones), or the global ones. */
  get(model?: string): TraceSettingValues {
    const own = model ? this.models.get(model) : undefined;
    return { ...this.global, ...own };
  }

  /**
   * Checks every key of `update` first, as Triton does, then applies them: an empty list clears a
   * model's override (or resets a global key to its default). Answers the resulting settings.
   */
  update(update: TraceSettingValues, model?: string): TraceSettingValues {
    if ('trace_file' in update) throw new HerdError('UNSUPPORTED', 'trace file location can not be updated through network protocol');
    const validated: [string, string[] | undefined][] = [];
    for (const key of UPDATABLE_TRACE_SETTINGS) {
      const values = update[key];
      if (values !== undefined) validated.push([key, validateSetting(key, values)]);
    }
    const target = model ? { ...this.models.get(model) } : { ...this.global };
    for (const [key, values] of validated) {
      if (values === undefined) continue; // nothing Triton recognised (e.g. only unknown trace levels)
      if (values.length > 0) target[key] = values;
      else if (model) delete target[key];
      else target[key] = [...(GLOBAL_DEFAULTS[key] ?? [])];
    }
    if (model) this.models.set(model, target);
    else this.global = target;
    return this.get(model);
  }
}

/** The stored values, [] to clear, or undefined when the update changes nothing. */
function validateSetting(key: string, values: readonly string[]): string[] | undefined {
  if (values.length === 0) return [];
  if (key === 'trace_level') {
    if (values.includes('OFF')) {
      if (values.length > 1) throw invalidArg("Expect only one trace level 'OFF' is specified");
      return ['OFF'];
    }
    // Levels are flags: unknown names are skipped, and the answer lists TIMESTAMPS before TENSORS.
    const levels = ['TIMESTAMPS', 'TENSORS'].filter((l) => values.includes(l));
    return levels.length > 0 ? levels : undefined;
  }
  if (values.length > 1) throw invalidArg(`expect only 1 value for '${key}'`);
  const text = values[0] ?? '';
  const value = parseLeadingInteger(text);
  if (value === undefined) throw invalidArg(`Unable to parse '${key}', got: ${text}`);
  const [min, max] = key === 'trace_count' ? [MIN_TRACE_COUNT, INT32_MAX] : [0, UINT32_MAX];
  if (value < -INT32_MAX - 1 || value > INT32_MAX) throw invalidArg(`Unable to parse '${key}', value is out of range [ ${min}, ${max} ], got: ${text}`);
  if (key === 'trace_count' && value < MIN_TRACE_COUNT) throw invalidArg(`Unable to parse '${key}'. Expecting value >= ${MIN_TRACE_COUNT}, got: ${text}`);
  // std::stoi into a uint32: a negative rate or frequency wraps, as it does in Triton.
  return [String(key === 'trace_count' || value >= 0 ? value : value + UINT32_MAX + 1)];
}

/** std::stoi: leading whitespace, an optional sign, then digits; anything after them is ignored. */
function parseLeadingInteger(text: string): number | undefined {
  const match = /^\s*([+-]?\d+)/.exec(text);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}
