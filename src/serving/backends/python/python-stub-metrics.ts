// One stub process's custom metrics: applies the 'metrics' frames its herd_stub_metrics.py sends (families
// and metrics it creates, increments, sets, observations, value questions) to the server's
// CustomMetricRegistry, and lets go of everything it held when the process ends.
import { escapeLogText } from '../../../core/escape-log-text.ts';
import { HerdError, toHerdError } from '../../../core/errors.ts';
import type { CustomMetricFamily, CustomMetricKind, CustomMetricRegistry, CustomSeries } from '../../../metrics/custom-metric-registry.ts';
import type { StubHeader } from './stub-wire.ts';

const KINDS: readonly CustomMetricKind[] = ['counter', 'gauge', 'histogram'];

interface HeldMetric {
  family: CustomMetricFamily;
  series: CustomSeries;
}

export class PythonStubMetrics {
  private readonly families = new Map<number, CustomMetricFamily>();
  private readonly metrics = new Map<number, HeldMetric>();
  private released = false;

  constructor(
    private readonly registry: CustomMetricRegistry,
    private readonly log: (line: string) => void,
  ) {}

  /** Applies the frame's operations in order; a frame with `ask` gets a 'metrics_reply' answering its last one. */
  handle(header: StubHeader, reply: (header: StubHeader) => void): void {
    const ops = Array.isArray(header['ops']) ? (header['ops'] as Record<string, unknown>[]) : [];
    const ask = header['ask'];
    let answer: StubHeader = { type: 'metrics_reply', ask };
    ops.forEach((op, i) => {
      try {
        const value = this.apply(op);
        if (i === ops.length - 1 && value !== undefined) answer.value = value;
      } catch (err) {
        const message = toHerdError(err).message;
        if (i === ops.length - 1 && ask !== undefined) answer = { type: 'metrics_reply', ask, error: message };
        else this.log(escapeLogText(`custom metric operation '${String(op['op'])}' failed: ${message}`));
      }
    });
    if (ask !== undefined) reply(answer);
  }

  /** The process is gone (unloaded, crashed, restarted): its metrics leave /metrics unless another holder shares them. */
  release(): void {
    if (this.released) return;
    this.released = true;
    for (const { family, series } of this.metrics.values()) family.release(series);
    for (const family of this.families.values()) this.registry.releaseFamily(family);
    this.metrics.clear();
    this.families.clear();
  }

  private apply(op: Record<string, unknown>): number | undefined {
    if (this.released) throw new HerdError('UNAVAILABLE', 'the model instance has ended');
    const id = Number(op['id']);
    switch (op['op']) {
      case 'family': {
        const kind = KINDS.find((k) => k === op['kind']);
        if (!kind) throw new HerdError('INVALID_ARG', `unknown metric kind '${String(op['kind'])}'`);
        this.families.set(id, this.registry.acquireFamily(String(op['name']), String(op['description'] ?? ''), kind));
        return undefined;
      }
      case 'metric': {
        const family = this.families.get(Number(op['family']));
        if (!family) throw new HerdError('NOT_FOUND', 'the metric family has been deleted');
        const labels = (op['labels'] ?? {}) as Record<string, string>;
        const buckets = Array.isArray(op['buckets']) ? (op['buckets'] as number[]) : undefined;
        this.metrics.set(id, { family, series: family.acquire(labels, buckets) });
        return undefined;
      }
      case 'drop_family': {
        const family = this.families.get(id);
        this.families.delete(id);
        if (family) this.registry.releaseFamily(family);
        return undefined;
      }
      default:
        return this.applyToMetric(id, op);
    }
  }

  private applyToMetric(id: number, op: Record<string, unknown>): number | undefined {
    const held = this.metrics.get(id);
    if (!held) throw new HerdError('NOT_FOUND', 'Metric has been invalidated.');
    const { family, series } = held;
    switch (op['op']) {
      case 'inc':
        family.increment(series, Number(op['value']));
        return undefined;
      case 'set':
        family.set(series, Number(op['value']));
        return undefined;
      case 'observe':
        for (const value of Array.isArray(op['values']) ? op['values'] : []) family.observe(series, Number(value));
        return undefined;
      case 'value':
        return family.value(series);
      case 'drop':
        this.metrics.delete(id);
        family.release(series);
        return undefined;
      default:
        throw new HerdError('INVALID_ARG', `unknown custom metric operation '${String(op['op'])}'`);
    }
  }
}
