// tritonserver's --trace-config (and its deprecated --trace-file/-level/-rate/-count/-log-frequency) into
// herd.yaml's serving.trace, step by step as Triton's command_line_parser.cc does, with its error words and warnings.
import {
  BSP_SETTINGS,
  type CppInteger,
  parseStoi,
  parseStoulToUint32,
  readBspDefault,
  type ServingTraceConfig,
  servingTraceSchema,
  UINT32_MAX,
} from '../config/serving-trace-config-schema.ts';
import { HerdError } from '../core/errors.ts';

/** The trace flags as commander hands them over (repeatable ones as lists). */
export interface TraceFlags {
  traceConfig?: string[];
  traceFile?: string;
  traceLevel?: string[];
  traceRate?: string;
  traceCount?: string;
  traceLogFrequency?: string;
}

type Env = Readonly<Record<string, string | undefined>>;
type Mode = ServingTraceConfig['mode'];
type Entry = [setting: string, value: string];

const TIMESTAMPS = 4;
const TENSORS = 8;

/** Triton's ParseException: the message its `tritonserver` prints under the usage text. */
class ParseError extends HerdError {
  constructor(message: string) {
    super('INVALID_ARG', message.trimEnd());
  }
}

/** Triton wraps a failed setting as `Bad option: "<where>".` above the reason. */
function badOption(where: string, err: unknown): never {
  if (err instanceof ParseError) throw new ParseError(`Bad option: "${where}".\n${err.message}`);
  throw err;
}

/** ParseOption<int> / ParseOption<uint32_t>: the reason words of a value std::stoi or std::stoul refused. */
function checked(result: CppInteger, text: string): number {
  if ('value' in result) return result.value;
  if (result.error === 'invalid') throw new ParseError(`Invalid option value. Got ${text}`);
  throw new ParseError(`Provided option value is out of bound. Got ${text}`);
}
const parseInt32 = (text: string) => checked(parseStoi(text), text);
/** An int32 handed to a uint32_t parameter (rate, log frequency): a negative one wraps, as in Triton. */
const parseWrappedInt = (text: string) => {
  const value = parseInt32(text);
  return value < 0 ? value + UINT32_MAX + 1 : value;
};
const parseUint32 = (text: string) => checked(parseStoulToUint32(text), text);

function parseLevel(text: string): number {
  const level = text.toLowerCase();
  if (level === 'false' || level === 'off') return 0;
  if (['true', 'on', 'min', 'max', 'timestamps'].includes(level)) return TIMESTAMPS;
  if (level === 'tensors') return TENSORS;
  throw new ParseError(`invalid value for trace level option: ${level}`);
}

function parseMode(text: string): Mode {
  const mode = text.toLowerCase();
  if (mode === 'triton' || mode === 'opentelemetry') return mode;
  throw new ParseError(`invalid value for trace mode option: ${mode}. Available options are "triton" and "opentelemetry"`);
}

/** ParseTraceConfigOption: `<mode>,<setting>=<value>` or a global `<setting>=<value>`. */
function splitTraceConfig(arg: string): [Mode | '', string, string] {
  const comma = arg.indexOf(',');
  const format = `--trace-config option format is '<trace mode>,<setting>=<value>'. Got ${arg}`;
  if (comma === 0) throw new ParseError(`No trace mode specified. --trace-config option format is <trace mode>,<setting>=<value> or <setting>=<value>. Got ${arg}`);
  const mode = comma > 0 ? parseMode(arg.slice(0, comma)) : '';
  const equals = arg.indexOf('=', comma + 1);
  if (equals < 0) throw new ParseError(format);
  const setting = arg.slice(comma + 1, equals);
  const value = arg.slice(equals + 1);
  if (setting === '' || value === '') throw new ParseError(format);
  return [mode, setting, value];
}

interface TraceState {
  levelBits: number | undefined;
  disable: boolean;
  warnings: string[];
}

/**
 * `flags` over `base` (herd.yaml's serving.trace, else the defaults): the trace config tritonserver would
 * run with, and the warnings it prints. Errors are INVALID_ARG HerdErrors carrying Triton's messages.
 */
export function parseTraceConfig(flags: TraceFlags, base: ServingTraceConfig | undefined, env: Env): { trace: ServingTraceConfig; warnings: string[] } {
  const trace = structuredClone(base ?? servingTraceSchema.parse({}));
  const state: TraceState = { levelBits: undefined, disable: false, warnings: [] };
  const entries: Record<Mode | '', Entry[]> = { '': [], triton: [], opentelemetry: [] };
  readDeprecatedFlags(flags, trace, state);
  for (const arg of flags.traceConfig ?? []) {
    let split: [Mode | '', string, string];
    try {
      split = splitTraceConfig(arg);
    } catch (err) {
      badOption('--trace-config', err);
    }
    entries[split[0]].push([split[1], split[2]]);
  }
  applyGlobalSettings(entries[''], flags, trace, state);
  if (trace.mode === 'opentelemetry') {
    if (flags.traceFile !== undefined) state.warnings.push("'--trace-file' is deprecated and will be ignored with opentelemetry tracing mode. ");
    if (flags.traceLogFrequency !== undefined) state.warnings.push("'--trace-log-frequency' is deprecated and will be ignored with opentelemetry tracing mode.");
    applyOpenTelemetrySettings(entries.opentelemetry, trace, env);
  } else {
    applyTritonSettings(entries.triton, flags, trace, state);
  }
  if (state.disable) trace.level = ['OFF'];
  else if (state.levelBits !== undefined) trace.level = levelNames(state.levelBits);
  return { trace: servingTraceSchema.parse(trace), warnings: state.warnings };
}

function levelNames(bits: number): ServingTraceConfig['level'] {
  if (bits === 0) return ['OFF'];
  return [...(bits & TIMESTAMPS ? (['TIMESTAMPS'] as const) : []), ...(bits & TENSORS ? (['TENSORS'] as const) : [])];
}

function addLevel(state: TraceState, text: string): void {
  const bits = parseLevel(text);
  if (bits === 0) state.disable = true;
  state.levelBits = (state.levelBits ?? 0) | bits;
}

const deprecation = (flag: string, use: string) => `'${flag}' has been deprecated and will be removed in future releases. Please use '--trace-config ${use} instead.`;

/** The deprecated flags, read in the option loop; the --trace-config ones read later override them. */
function readDeprecatedFlags(flags: TraceFlags, trace: ServingTraceConfig, state: TraceState): void {
  const read = (flag: string, use: string, apply: () => void) => {
    state.warnings.push(deprecation(flag, use));
    try {
      apply();
    } catch (err) {
      badOption(flag, err);
    }
  };
  const { traceFile, traceRate, traceCount, traceLogFrequency } = flags;
  if (traceFile !== undefined) read('--trace-file', 'triton,file=<filepath>', () => {});
  for (const level of flags.traceLevel ?? []) read('--trace-level', 'level=<OFF|TIMESTAMPS|TENSORS>', () => addLevel(state, level));
  if (traceRate !== undefined) read('--trace-rate', 'rate=<rate value>', () => (trace.rate = parseWrappedInt(traceRate)));
  if (traceCount !== undefined) read('--trace-count', 'count=<count value>', () => (trace.count = parseInt32(traceCount)));
  if (traceLogFrequency !== undefined) {
    read('--trace-log-frequency', 'triton,log-frequency=<log frequency value>', () => parseInt32(traceLogFrequency));
  }
}

/** SetGlobalTraceArgs: rate, level, mode and count, in the order given; other global settings are ignored. */
function applyGlobalSettings(entries: readonly Entry[], flags: TraceFlags, trace: ServingTraceConfig, state: TraceState): void {
  const override = (flag: string, what: string) => `Overriding deprecated '${flag}' in favor of provided ${what} in --trace-config!`;
  for (const [setting, value] of entries) {
    try {
      if (setting === 'rate') {
        if (flags.traceRate !== undefined) state.warnings.push(override('--trace-rate', 'rate value'));
        trace.rate = parseWrappedInt(value);
      } else if (setting === 'level') {
        if (flags.traceLevel !== undefined) state.warnings.push(override('--trace-level', 'level'));
        addLevel(state, value);
      } else if (setting === 'mode') {
        trace.mode = parseMode(value);
      } else if (setting === 'count') {
        if (flags.traceCount !== undefined) state.warnings.push(override('--trace-count', 'count'));
        trace.count = parseInt32(value);
      }
    } catch (err) {
      badOption(`--trace-config ${setting}`, err);
    }
  }
}

/** SetTritonTraceArgs: file and log-frequency (over the deprecated flags); other settings are kept unused. */
function applyTritonSettings(entries: readonly Entry[], flags: TraceFlags, trace: ServingTraceConfig, state: TraceState): void {
  const section = trace.triton;
  if (flags.traceFile !== undefined) section.file = flags.traceFile;
  if (flags.traceLogFrequency !== undefined) section.log_frequency = parseWrappedInt(flags.traceLogFrequency);
  for (const [setting, value] of entries) {
    try {
      if (setting === 'file') {
        if (flags.traceFile !== undefined) state.warnings.push("Overriding deprecated '--trace-file' in favor of provided file in --trace-config!");
        section.file = value;
      } else if (setting === 'log-frequency') {
        if (flags.traceLogFrequency !== undefined) state.warnings.push("Overriding deprecated '--trace-log-frequency' in favor of provided log-frequency in --trace-config!");
        section.log_frequency = parseWrappedInt(value);
      } else {
        section.other[setting] = value;
      }
    } catch (err) {
      badOption(`--trace-config triton,${setting}`, err);
    }
  }
}

/** SetOpenTelemetryTraceArgs: url, resource=KEY=VALUE, the bsp_* numbers (unset ones from OTEL_BSP_*, else defaults). */
function applyOpenTelemetrySettings(entries: readonly Entry[], trace: ServingTraceConfig, env: Env): void {
  const section = trace.opentelemetry;
  for (const [setting, value] of entries) {
    if (setting === 'url') section.url = value;
    else if (setting === 'resource') {
      // Triton splits at the first '='; without one, the whole text is both key and value.
      const equals = value.indexOf('=');
      section.resource[value.slice(0, equals < 0 ? undefined : equals)] = value.slice(equals + 1);
    } else if (BSP_SETTINGS.some(([name]) => name === setting)) {
      try {
        section[setting as (typeof BSP_SETTINGS)[number][0]] = parseUint32(value);
      } catch (err) {
        badOption(`--trace-config opentelemetry,${setting}`, err);
      }
    } else section.other[setting] = value;
  }
  for (const [name] of BSP_SETTINGS) {
    if (section[name] !== undefined) continue;
    const { variable, text } = readBspDefault(name, env);
    try {
      section[name] = parseUint32(text);
    } catch (err) {
      badOption(variable, err);
    }
  }
}

const GLOBAL_PATHS: Readonly<Record<string, string>> = { rate: 'rate', count: 'count', level: 'level', mode: 'mode' };
const TRITON_PATHS: Readonly<Record<string, string>> = { file: 'triton.file', 'log-frequency': 'triton.log_frequency' };

/** The serving.trace path one --trace-config value sets (for the settings page's sources), or undefined for one Triton ignores or refuses. */
export function describeTraceConfigPath(arg: string): string | undefined {
  let split: [Mode | '', string, string];
  try {
    split = splitTraceConfig(arg);
  } catch {
    return undefined;
  }
  const [mode, setting, value] = split;
  if (mode === '') return GLOBAL_PATHS[setting] === undefined ? undefined : `serving.trace.${GLOBAL_PATHS[setting]}`;
  if (mode === 'triton') return `serving.trace.${TRITON_PATHS[setting] ?? `triton.other.${setting}`}`;
  if (setting === 'resource') return `serving.trace.opentelemetry.resource.${value.split('=')[0] ?? ''}`;
  if (setting === 'url' || BSP_SETTINGS.some(([name]) => name === setting)) return `serving.trace.opentelemetry.${setting}`;
  return `serving.trace.opentelemetry.other.${setting}`;
}
