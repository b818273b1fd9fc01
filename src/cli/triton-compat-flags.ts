// tritonserver flags that deployments written for Triton pass (KServe's ModelMesh runtime, Triton's own
// examples): the ones that mean nothing for Herd are accepted with a warning, so the same args start Herd, and
// the trace flags are read as Triton reads them. Any other unknown flag is commander's error, as tritonserver's.
import type { Command } from 'commander';
import type { ServingTraceConfig } from '../config/serving-trace-config-schema.ts';
import { parseTraceConfig, type TraceFlags } from './parse-trace-config.ts';

/** flag → why Herd ignores it. */
const IGNORED: Readonly<Record<string, string>> = {
  '--strict-model-config': 'Herd completes what config.pbtxt leaves out when the model file says it',
  '--disable-auto-complete-config': 'Herd completes what config.pbtxt leaves out when the model file says it',
  '--allow-sagemaker': 'Herd serves no SageMaker endpoint',
  '--allow-vertex-ai': 'Herd serves no Vertex AI endpoint',
  '--allow-metrics': 'the metrics port is always served (--metrics-port)',
  '--allow-gpu-metrics': 'Herd runs on CPUs',
  '--allow-cpu-metrics': 'process metrics are always exported',
  '--metrics-interval-ms': 'Herd computes its metrics when scraped',
  '--exit-on-error': 'a model that fails to load is UNAVAILABLE and the others serve',
  '--log-info': "Herd's log lines do not change with it",
  '--log-warning': "Herd's log lines do not change with it",
  '--log-error': "Herd's log lines do not change with it",
  '--log-format': "Herd's log lines do not change with it",
  '--pinned-memory-pool-byte-size': 'Herd runs on CPUs',
  '--cuda-memory-pool-byte-size': 'Herd runs on CPUs',
  '--min-supported-compute-capability': 'Herd runs on CPUs',
  '--backend-directory': "Herd's backends are built in",
  '--repoagent-directory': 'Herd has no repository agents',
  '--model-load-thread-count': 'Herd loads models one after another',
  '--buffer-manager-thread-count': 'Herd keeps no buffer manager threads',
  '--http-thread-count': 'one event loop answers HTTP',
};

/** `--strict-model-config` → `strictModelConfig`, commander's attribute name. */
function attributeOf(flag: string): string {
  return flag.slice(2).replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The ignored flags, and tritonserver's trace flags (read by resolveTraceFlags). */
export function registerIgnoredTritonFlags(command: Command): void {
  for (const [flag, why] of Object.entries(IGNORED)) command.option(`${flag} [value]`, `tritonserver's; accepted and ignored: ${why}`);
  command
    .option(
      '--trace-config <[mode,]setting=value>',
      "tritonserver's tracing, one setting per flag (repeatable): mode=triton|opentelemetry, rate=N, count=N, level=OFF|TIMESTAMPS|TENSORS, triton,file=PATH, triton,log-frequency=N, opentelemetry,url=URL, opentelemetry,resource=KEY=VALUE, opentelemetry,bsp_max_queue_size|bsp_schedule_delay|bsp_max_export_batch_size=N (replaces herd.yaml serving.trace's values it names)",
      collect,
    )
    .option('--trace-file <path>', 'deprecated by tritonserver: --trace-config triton,file=PATH')
    .option('--trace-level <level>', 'deprecated by tritonserver: --trace-config level=LEVEL (repeatable)', collect)
    .option('--trace-rate <n>', 'deprecated by tritonserver: --trace-config rate=N')
    .option('--trace-count <n>', 'deprecated by tritonserver: --trace-config count=N')
    .option('--trace-log-frequency <n>', 'deprecated by tritonserver: --trace-config triton,log-frequency=N');
}

const TRACE_FLAGS = ['traceConfig', 'traceFile', 'traceLevel', 'traceRate', 'traceCount', 'traceLogFrequency'] as const;

function readTraceFlags(flags: object): TraceFlags | undefined {
  const given = flags as Readonly<Record<string, unknown>>;
  if (!TRACE_FLAGS.some((name) => given[name] !== undefined)) return undefined;
  return Object.fromEntries(TRACE_FLAGS.filter((name) => given[name] !== undefined).map((name) => [name, given[name]])) as TraceFlags;
}

/** herd.yaml's serving.trace with the trace flags over it (Triton's errors when one is wrong); unchanged without any. */
export function resolveTraceFlags(flags: object, current: ServingTraceConfig, env: Readonly<Record<string, string | undefined>> = process.env): ServingTraceConfig {
  const trace = readTraceFlags(flags);
  return trace === undefined ? current : parseTraceConfig(trace, current, env).trace;
}

/** One warning per ignored flag given, then tritonserver's warnings about its trace flags. */
export function listIgnoredTritonFlags(flags: Readonly<Record<string, unknown>>): string[] {
  const ignored = Object.entries(IGNORED).flatMap(([flag, why]) => (flags[attributeOf(flag)] === undefined ? [] : [`${flag} is tritonserver's and ignored by Herd: ${why}`]));
  const trace = readTraceFlags(flags);
  return trace === undefined ? ignored : [...ignored, ...parseTraceConfig(trace, undefined, process.env).warnings];
}
