// herd.yaml's `serving.trace`: Triton's trace settings (tritonserver --trace-config), the start values of
// the trace settings API (/v2/trace/setting) and of which inferences are traced, in Triton's or OpenTelemetry's mode.
import { z } from 'zod';

export const UINT32_MAX = 2 ** 32 - 1;
export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;

const uint32 = z.number().int().min(0).max(UINT32_MAX);

/** Triton's BatchSpanProcessor settings, their environment variables and defaults (command_line_parser.cc). */
export const BSP_SETTINGS = [
  ['bsp_max_queue_size', 'OTEL_BSP_MAX_QUEUE_SIZE', '2048'],
  ['bsp_schedule_delay', 'OTEL_BSP_SCHEDULE_DELAY', '5000'],
  ['bsp_max_export_batch_size', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', '512'],
] as const;
export type BspSetting = (typeof BSP_SETTINGS)[number][0];

/** Settings tritonserver takes without using them; the trace settings API echoes them, as Triton's does. */
const otherSettings = z
  .record(z.string().min(1), z.string())
  .default({})
  .describe("settings tritonserver accepts and ignores (e.g. --trace-config triton,foo=bar); the trace settings API lists them as Triton's does");

export const tritonTraceSchema = z
  .strictObject({
    file: z.string().default('').describe('--trace-config triton,file=PATH: where traces are written as JSON; empty: Triton mode traces nothing (as tritonserver)'),
    log_frequency: uint32.default(0).describe('--trace-config triton,log-frequency=N: 0 writes every trace to the file at shutdown; N writes each N traces to PATH.0, PATH.1, …'),
    other: otherSettings,
  })
  .describe('Triton mode: the JSON trace file that Triton writes and its trace_summary.py tool reads');

export const openTelemetryTraceSchema = z
  .strictObject({
    url: z.string().min(1).optional().describe('--trace-config opentelemetry,url=URL: where spans are sent by OTLP/HTTP'),
    resource: z.record(z.string(), z.string()).default({}).describe('--trace-config opentelemetry,resource=KEY=VALUE (repeatable): resource attributes of the exported spans'),
    bsp_max_queue_size: uint32.optional().describe(`spans kept waiting for export, then dropped (default: $OTEL_BSP_MAX_QUEUE_SIZE, else 2048)`),
    bsp_schedule_delay: uint32.optional().describe('milliseconds between exports (default: $OTEL_BSP_SCHEDULE_DELAY, else 5000)'),
    bsp_max_export_batch_size: uint32.optional().describe('spans per export (default: $OTEL_BSP_MAX_EXPORT_BATCH_SIZE, else 512)'),
    other: otherSettings,
  })
  .describe('OpenTelemetry mode: spans exported by OTLP/HTTP');

export const servingTraceSchema = z
  .strictObject({
    mode: z.enum(['triton', 'opentelemetry']).default('triton').describe('--trace-config mode=…: Triton JSON trace files, or OpenTelemetry spans'),
    level: z
      .array(z.enum(['OFF', 'TIMESTAMPS', 'TENSORS']))
      .default(['OFF'])
      .describe('--trace-config level=… (repeatable): TIMESTAMPS and/or TENSORS; OFF anywhere turns tracing off'),
    rate: uint32.default(1000).describe('--trace-config rate=N: every N-th request is traced (0: only requests carrying a traceparent, in OpenTelemetry mode)'),
    count: z.number().int().min(INT32_MIN).max(INT32_MAX).default(-1).describe('--trace-config count=N: traces to take before tracing stops; -1: no limit'),
    triton: tritonTraceSchema.prefault({}),
    opentelemetry: openTelemetryTraceSchema.prefault({}),
  })
  .describe("Triton's tracing (tritonserver --trace-config); the trace settings API changes level, rate, count and log frequency at run time");

export type ServingTraceConfig = z.infer<typeof servingTraceSchema>;

/** A BatchSpanProcessor setting left unset: its OTEL_BSP_* variable, else Triton's default, as a string to parse. */
export function readBspDefault(setting: BspSetting, env: Readonly<Record<string, string | undefined>>): { variable: string; text: string } {
  const [, variable, fallback] = BSP_SETTINGS.find(([name]) => name === setting) ?? BSP_SETTINGS[0];
  return { variable, text: env[variable] ?? fallback };
}

/** What std::stoi / std::stoul made of a text: its value, or which exception they threw. */
export type CppInteger = { value: number } | { error: 'invalid' | 'out of range' };

const LEADING_INTEGER = /^[ \t\n\v\f\r]*([+-]?)(\d+)/;

/** std::stoi: leading blanks, a sign, digits (anything after them ignored), within int32. */
export function parseStoi(text: string): CppInteger {
  const match = LEADING_INTEGER.exec(text);
  if (!match) return { error: 'invalid' };
  const value = BigInt(`${match[1]}${match[2]}`);
  if (value < BigInt(INT32_MIN) || value > BigInt(INT32_MAX)) return { error: 'out of range' };
  return { value: Number(value) };
}

/** std::stoul stored into a uint32_t: a minus sign wraps (as strtoul does), then the top bits are cut. */
export function parseStoulToUint32(text: string): CppInteger {
  const match = LEADING_INTEGER.exec(text);
  if (!match) return { error: 'invalid' };
  const magnitude = BigInt(match[2] as string);
  const ulongMax = 2n ** 64n - 1n;
  if (magnitude > ulongMax) return { error: 'out of range' };
  const asUlong = match[1] === '-' ? (2n ** 64n - magnitude) % 2n ** 64n : magnitude;
  return { value: Number(asUlong % 2n ** 32n) };
}
