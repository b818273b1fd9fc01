// Herd's one prom-client registry: Node process metrics and Triton's CPU metrics on creation; the
// serving side (registerInferenceMetrics) and the gateway add their families to the same one.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { registerCpuMetrics } from './cpu-metrics.ts';

export interface MetricsRegistryOptions {
  /** prom-client's default Node process metrics (process_*, nodejs_*). Default true. */
  processMetrics?: boolean;
  /** nv_cpu_utilization and nv_cpu_memory_*_bytes, where /proc exists. Default true. */
  cpuMetrics?: boolean;
}

export function createMetricsRegistry(options: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  if (options.cpuMetrics ?? true) registerCpuMetrics(registry);
  return registry;
}

export interface RenderedMetrics {
  /** Prometheus text exposition format 0.0.4, as Triton answers. */
  contentType: string;
  body: string;
}

/** The text a GET /metrics answers: every family of `registry`, collected now. */
export async function renderMetrics(registry: Registry): Promise<RenderedMetrics> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
