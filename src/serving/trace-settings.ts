// Trace settings as Triton's TraceManager keeps them, from --trace-config: a global setting and per-model overrides,
// each with its sampler (rate, count) and, in Triton mode, its trace log. It answers the gRPC TraceSetting RPC and
// HTTP /v2[/models/{m}]/trace/setting; sample() is the per-request decision and finish() feeds the trace file.
import { parseStoi, parseStoulToUint32, readBspDefault, type ServingTraceConfig, servingTraceSchema, UINT32_MAX } from '../config/serving-trace-config-schema.ts';
import { HerdError, invalidArg } from '../core/errors.ts';
import { type TraceMode, TraceSampler } from './trace-sampler.ts';
import { type TritonTraceRecord, TritonTraceFile, TritonTraceLog } from './triton-trace-file.ts';

export type TraceLevelName = 'TIMESTAMPS' | 'TENSORS';

/** The answer: key to values in Triton's order; a key may repeat (one `resource` per attribute). */
export type TraceSettingEntries = [key: string, values: string[]][];

/** A checked update: a value sets, `null` clears (a model falls back to the global value, the global one to its start value). */
export interface TraceSettingUpdate {
  trace_level?: TraceLevelName[] | null;
  trace_rate?: number | null;
  trace_count?: number | null;
  log_frequency?: number | null;
}

/** Which transport sent the update: Triton's HTTP and gRPC word one refusal differently. */
export type TraceWire = 'http' | 'grpc';

/** A request chosen for tracing. */
export interface SampledTrace {
  /** Triton's trace id (a positive integer, unique in this server); ensemble steps take theirs from nextTraceId(). */
  id: number;
  mode: TraceMode;
  levels: readonly TraceLevelName[];
  /** Triton mode: the finished request's records, for the trace file. OpenTelemetry mode: does nothing. */
  finish(records: readonly TritonTraceRecord[]): void;
}

const MIN_TRACE_COUNT = -1;
const INT32_MAX = 2 ** 31 - 1;
const KEYS = ['trace_level', 'trace_rate', 'trace_count', 'log_frequency'] as const;
type Key = (typeof KEYS)[number];
/** The keys a client may update; Triton ignores any other key (trace_file is refused). */
export const UPDATABLE_TRACE_SETTINGS = KEYS;

interface Fields {
  trace_level: TraceLevelName[];
  trace_rate: number;
  trace_count: number;
  log_frequency: number;
}

/** One TraceSetting: its values, which of them it sets itself (the rest mirror its fallback), its counters. */
interface Setting {
  fields: Fields;
  specified: Record<Key, boolean>;
  sampler: TraceSampler;
  log: TritonTraceLog | undefined;
  /** Replaced by an update: traces still running write their part at once when they end. */
  retired: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

export class TraceSettings {
  readonly mode: TraceMode;
  private readonly file: string;
  /** The mode's own settings as the API lists them after trace_mode. */
  private readonly modeEntries: TraceSettingEntries;
  private readonly traceFile: TritonTraceFile | undefined;
  private readonly start: Setting;
  private global: Setting;
  private readonly models = new Map<string, Setting>();
  /** Models whose override leaves some values to the global setting: renewed when it changes. */
  private readonly fallbackModels = new Set<string>();
  /** The logs of the settings in force, written at shutdown. */
  private readonly logs = new Set<TritonTraceLog>();
  private lastTraceId = 0;

  constructor(config: ServingTraceConfig = servingTraceSchema.parse({}), options: { env?: Env; log?: (line: string) => void } = {}) {
    this.mode = config.mode;
    this.file = config.triton.file;
    this.modeEntries = config.mode === 'triton' ? Object.entries(config.triton.other).map(([k, v]) => [k, [v]]) : listOpenTelemetry(config, options.env ?? process.env);
    this.traceFile = config.mode === 'triton' && this.file !== '' ? new TritonTraceFile(this.file, options.log) : undefined;
    const levels = config.level.includes('OFF') ? [] : (config.level.filter((l) => l !== 'OFF') as TraceLevelName[]);
    const fields: Fields = { trace_level: levels, trace_rate: config.rate, trace_count: config.count, log_frequency: config.triton.log_frequency };
    const none = { trace_level: false, trace_rate: false, trace_count: false, log_frequency: false };
    // The start values, never sampled: what a cleared global value returns to.
    this.start = { fields, specified: none, sampler: this.makeSampler(fields), log: undefined, retired: false };
    this.global = this.makeSetting(fields, none);
  }

  /** The settings answered for a model (its own, else the global ones), or the global ones. */
  get(model?: string): TraceSettingEntries {
    const setting = this.settingOf(model);
    const { trace_level, trace_rate, log_frequency } = setting.fields;
    const entries: TraceSettingEntries = [
      ['trace_level', trace_level.length === 0 ? ['OFF'] : [...trace_level]],
      ['trace_rate', [String(trace_rate)]],
      // The count left, as Triton answers it: it falls to 0 as traces are taken.
      ['trace_count', [String(setting.sampler.count)]],
    ];
    if (this.mode === 'triton') entries.push(['log_frequency', [String(log_frequency)]], ['trace_file', [this.file]]);
    entries.push(['trace_mode', [this.mode]], ...this.modeEntries.map(([k, v]): [string, string[]] => [k, [...v]]));
    return entries;
  }

  /** Applies a checked update as TraceManager::UpdateTraceSetting does, then answers the resulting settings. */
  update(update: TraceSettingUpdate, model?: string): TraceSettingEntries {
    this.updateOne(update, model);
    // The models that mirror part of the global setting take its new values (and start counting again).
    if (!model) for (const name of [...this.fallbackModels]) this.updateOne({}, name);
    return this.get(model);
  }

  /** Whether to trace a request to `model`; `propagated` when it carries a W3C traceparent. */
  sample(model: string, request: { propagated: boolean }): SampledTrace | undefined {
    const setting = this.settingOf(model);
    if (!setting.sampler.sample(request)) return undefined;
    return {
      id: this.nextTraceId(),
      mode: this.mode,
      levels: setting.fields.trace_level,
      finish: (records) => {
        setting.log?.write(records);
        if (setting.retired) setting.log?.flush();
      },
    };
  }

  /** Trace ids for the requests a traced request makes (ensemble steps, BLS calls). */
  nextTraceId(): number {
    this.lastTraceId += 1;
    return this.lastTraceId;
  }

  /** At shutdown: every setting's gathered traces to the file, and the file's array closed. */
  close(): void {
    for (const log of this.logs) log.flush();
    this.traceFile?.close();
  }

  private settingOf(model: string | undefined): Setting {
    return (model ? this.models.get(model) : undefined) ?? this.global;
  }

  private makeSampler(fields: Fields): TraceSampler {
    return new TraceSampler({ levels: fields.trace_level, rate: fields.trace_rate, count: fields.trace_count, mode: this.mode, file: this.file });
  }

  /** A new setting, its log among the ones written at shutdown until it is retired. */
  private makeSetting(fields: Fields, specified: Record<Key, boolean>): Setting {
    const sampler = this.makeSampler(fields);
    const log = this.traceFile ? new TritonTraceLog(this.traceFile, fields.log_frequency, sampler) : undefined;
    if (log) this.logs.add(log);
    return { fields, specified, sampler, log, retired: false };
  }

  /** UpdateTraceSettingInternal: values from the fallback, then the ones set here (kept, or new). */
  private updateOne(update: TraceSettingUpdate, model: string | undefined): void {
    const current = model ? this.models.get(model) : this.global;
    const fallback = model ? this.global : this.start;
    const fields: Fields = { ...fallback.fields, trace_count: fallback.sampler.count };
    const specified = { trace_level: false, trace_rate: false, trace_count: false, log_frequency: false };
    for (const key of KEYS) {
      const value = update[key];
      specified[key] = value === null ? false : (current?.specified[key] ?? false) || value !== undefined;
      if (!specified[key]) continue;
      const kept = current && (key === 'trace_count' ? current.sampler.count : current.fields[key]);
      Object.assign(fields, { [key]: value ?? kept });
    }
    if (model) {
      // A model with nothing of its own simply uses the global setting.
      if (!KEYS.some((k) => specified[k])) {
        this.retire(this.models.get(model));
        this.models.delete(model);
        this.fallbackModels.delete(model);
        return;
      }
      this.fallbackModels.add(model);
    }
    const next = this.makeSetting(fields, specified);
    // The only invalid setting allowed is one that turns tracing off.
    if (!next.sampler.valid && fields.trace_level.length > 0) {
      this.retire(next);
      throw invalidArg(`Attempting to set invalid trace setting :${next.sampler.invalidReason}`);
    }
    this.retire(current);
    if (model) this.models.set(model, next);
    else this.global = next;
  }

  /** A replaced setting writes what it gathered, as Triton's does when its last trace ends. */
  private retire(setting: Setting | undefined): void {
    if (!setting) return;
    setting.retired = true;
    setting.log?.flush();
    if (setting.log) this.logs.delete(setting.log);
  }
}

/** OpenTelemetry mode's settings as Triton answers them: url, one `resource` per attribute, the bsp_* numbers, the rest. */
function listOpenTelemetry(config: ServingTraceConfig, env: Env): TraceSettingEntries {
  const otel = config.opentelemetry;
  const entries: TraceSettingEntries = [];
  if (otel.url !== undefined) entries.push(['url', [otel.url]]);
  for (const [key, value] of Object.entries(otel.resource)) entries.push(['resource', [`${key}=${value}`]]);
  for (const name of ['bsp_max_queue_size', 'bsp_schedule_delay', 'bsp_max_export_batch_size'] as const) {
    entries.push([name, [String(otel[name] ?? readBsp(name, env))]]);
  }
  for (const [key, value] of Object.entries(otel.other)) entries.push([key, [value]]);
  return entries;
}

/** An unset bsp_* setting from its OTEL_BSP_* variable, else Triton's default; a bad variable fails as it does in Triton. */
export function readBsp(name: Parameters<typeof readBspDefault>[0], env: Env): number {
  const { variable, text } = readBspDefault(name, env);
  const parsed = parseStoulToUint32(text);
  if ('value' in parsed) return parsed.value;
  const why = parsed.error === 'invalid' ? `Invalid option value. Got ${text}` : `Provided option value is out of bound. Got ${text}`;
  throw new HerdError('INVALID_ARG', `Bad option: "${variable}".\n${why}`);
}

/**
 * A wire update (key to values; [] clears) checked as Triton's handlers check it, in its order: trace_file
 * refused, levels, then each number parsed by std::stoi with Triton's messages. Other keys are ignored.
 */
export function parseTraceSettingUpdate(values: Readonly<Record<string, readonly string[]>>, wire: TraceWire): TraceSettingUpdate {
  if ('trace_file' in values) throw new HerdError('UNSUPPORTED', 'trace file location can not be updated through network protocol');
  const update: TraceSettingUpdate = {};
  const levels = values['trace_level'];
  if (levels !== undefined) {
    const parsed = parseLevels(levels);
    if (parsed !== undefined) update.trace_level = parsed;
  }
  for (const key of ['trace_rate', 'trace_count', 'log_frequency'] as const) {
    const given = values[key];
    if (given === undefined) continue;
    if (given.length === 0) update[key] = null;
    else if (given.length > 1) throw invalidArg(`expect only 1 value for '${key}'`);
    else update[key] = parseNumber(key, given[0] ?? '', wire);
  }
  return update;
}

/** null clears; undefined when nothing Triton recognises was given (only unknown level names). */
function parseLevels(values: readonly string[]): TraceLevelName[] | null | undefined {
  if (values.length === 0) return null;
  if (values.includes('OFF')) {
    if (values.length > 1) throw invalidArg("Expect only one trace level 'OFF' is specified");
    return [];
  }
  // Levels are flags: unknown names are skipped, and the answer lists TIMESTAMPS before TENSORS.
  const levels = (['TIMESTAMPS', 'TENSORS'] as const).filter((l) => values.includes(l));
  return levels.length > 0 ? levels : undefined;
}

function parseNumber(key: 'trace_rate' | 'trace_count' | 'log_frequency', text: string, wire: TraceWire): number {
  const parsed = parseStoi(text);
  const isCount = key === 'trace_count';
  if ('error' in parsed) {
    if (parsed.error === 'invalid') throw invalidArg(`Unable to parse '${key}', got: ${text}`);
    const [min, max] = isCount ? [MIN_TRACE_COUNT, INT32_MAX] : [0, UINT32_MAX];
    throw invalidArg(`Unable to parse '${key}', value is out of range [ ${min}, ${max} ], got: ${text}`);
  }
  if (isCount && parsed.value < MIN_TRACE_COUNT) {
    // Triton's HTTP handler leaves out the space its gRPC handler has.
    throw invalidArg(`Unable to parse '${key}'. Expecting value >= ${MIN_TRACE_COUNT}, got:${wire === 'grpc' ? ' ' : ''}${text}`);
  }
  // std::stoi into a uint32: a negative rate or frequency wraps, as it does in Triton.
  return isCount || parsed.value >= 0 ? parsed.value : parsed.value + UINT32_MAX + 1;
}
