// tritonserver flags that deployments written for Triton pass (KServe's ModelMesh runtime, Triton's own
// examples) and that mean nothing for Herd: accepted with a warning, so the same args start Herd. Any other
// unknown flag is commander's error ("unknown option"), as tritonserver refuses one.
import type { Command } from 'commander';

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

export function registerIgnoredTritonFlags(command: Command): void {
  for (const [flag, why] of Object.entries(IGNORED)) command.option(`${flag} [value]`, `tritonserver's; accepted and ignored: ${why}`);
}

/** One warning per ignored flag given. */
export function listIgnoredTritonFlags(flags: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(IGNORED).flatMap(([flag, why]) => (flags[attributeOf(flag)] === undefined ? [] : [`${flag} is tritonserver's and ignored by Herd: ${why}`]));
}
