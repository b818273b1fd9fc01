// Custom metric families that models create at run time (Triton's TRITONSERVER_MetricFamily, which Python
// models reach through pb_utils.MetricFamily): counters, gauges and histograms with the model's own labels,
// shown on /metrics beside Herd's families, and gone when the last model holding them lets them go.
import type { Metric, Registry } from 'prom-client';
import { HerdError } from '../core/errors.ts';

export type CustomMetricKind = 'counter' | 'gauge' | 'histogram';

/** Prometheus' rules for names, as prometheus-cpp (which Triton uses) checks them. */
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** One series: a value (counter, gauge) or a histogram's buckets, held by as many metrics as named it. */
export interface CustomSeries {
  readonly labels: Readonly<Record<string, string>>;
  value: number;
  readonly buckets: readonly number[];
  /** Per bucket: observations at or below its bound (cumulative, as Prometheus shows them). */
  readonly counts: number[];
  sum: number;
  count: number;
  refs: number;
}

interface SampleLine {
  metricName: string;
  labels: Record<string, string>;
  value: number;
}

export class CustomMetricFamily {
  readonly series = new Map<string, CustomSeries>();
  refs = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly kind: CustomMetricKind,
  ) {}

  /** A metric with these labels: the existing series when another metric named the same labels (Triton shares it). */
  acquire(labels: Readonly<Record<string, string>>, buckets: readonly number[] | undefined): CustomSeries {
    const sorted = Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    for (const [name, value] of Object.entries(sorted)) {
      if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new HerdError('INVALID_ARG', 'Invalid label name');
      if (typeof value !== 'string') throw new HerdError('INVALID_ARG', `label '${name}' must have a string value`);
    }
    if (this.kind === 'histogram') checkBuckets(buckets);
    else if (buckets !== undefined) throw new HerdError('INVALID_ARG', 'Unexpected buckets found.');
    const key = JSON.stringify(sorted);
    let series = this.series.get(key);
    if (!series) {
      const bounds = this.kind === 'histogram' ? [...(buckets ?? [])] : [];
      series = { labels: sorted, value: 0, buckets: bounds, counts: new Array<number>(bounds.length).fill(0), sum: 0, count: 0, refs: 0 };
      this.series.set(key, series);
    }
    series.refs++;
    return series;
  }

  release(series: CustomSeries): void {
    if (--series.refs > 0) return;
    for (const [key, s] of this.series) if (s === series) this.series.delete(key);
  }

  increment(series: CustomSeries, value: number): void {
    if (this.kind === 'histogram') throw unsupported('HISTOGRAM', 'Increment');
    if (this.kind === 'counter' && !(value >= 0)) {
      throw new HerdError('INVALID_ARG', 'TRITONSERVER_METRIC_KIND_COUNTER can only be incremented monotonically by non-negative values.');
    }
    series.value += value;
  }

  set(series: CustomSeries, value: number): void {
    if (this.kind !== 'gauge') throw unsupported(this.kind.toUpperCase(), 'Set');
    series.value = value;
  }

  observe(series: CustomSeries, value: number): void {
    if (this.kind !== 'histogram') throw unsupported(this.kind.toUpperCase(), 'Observe');
    series.sum += value;
    series.count++;
    series.buckets.forEach((bound, i) => {
      if (value <= bound) series.counts[i] = (series.counts[i] ?? 0) + 1;
    });
  }

  value(series: CustomSeries): number {
    if (this.kind === 'histogram') throw unsupported('HISTOGRAM', 'Value');
    return series.value;
  }

  /** The family as prom-client's registry collects it (a histogram's buckets cumulative, as Prometheus wants). */
  collect(): { name: string; help: string; type: CustomMetricKind; aggregator: 'sum'; values: SampleLine[] } {
    const values: SampleLine[] = [];
    for (const s of this.series.values()) {
      if (this.kind !== 'histogram') {
        values.push({ metricName: this.name, labels: { ...s.labels }, value: s.value });
        continue;
      }
      s.buckets.forEach((bound, i) => {
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: String(bound) }, value: s.counts[i] ?? 0 });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: { ...s.labels }, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: { ...s.labels }, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.kind, aggregator: 'sum', values };
  }
}

function checkBuckets(buckets: readonly number[] | undefined): void {
  if (buckets === undefined) throw new HerdError('INVALID_ARG', 'Missing required buckets.');
  if (!buckets.every((b) => typeof b === 'number' && !Number.isNaN(b))) throw new HerdError('INVALID_ARG', 'Buckets must be a list of numbers.');
  for (let i = 1; i < buckets.length; i++) {
    if ((buckets[i] as number) <= (buckets[i - 1] as number)) throw new HerdError('INVALID_ARG', 'Bucket Boundaries must be strictly sorted');
  }
}

const unsupported = (kind: string, what: string) => new HerdError('UNSUPPORTED', `TRITONSERVER_METRIC_KIND_${kind} does not support ${what}`);

/** The custom families of one server, registered into its Prometheus registry (none: kept, not shown). */
export class CustomMetricRegistry {
  private readonly families = new Map<string, CustomMetricFamily>();

  constructor(private readonly registry?: Registry) {}

  /** Triton's rule: the same name and kind is the existing family (its first description kept); another kind is refused. */
  acquireFamily(name: string, help: string, kind: CustomMetricKind): CustomMetricFamily {
    if (!METRIC_NAME.test(name)) throw new HerdError('INVALID_ARG', 'Invalid metric name');
    let family = this.families.get(name);
    if (family && family.kind !== kind) throw new HerdError('INVALID_ARG', 'Family name already exists with different type');
    if (!family) {
      if (this.registry?.getSingleMetric(name)) throw new HerdError('INVALID_ARG', `'${name}' is the name of one of Herd's own metrics`);
      family = new CustomMetricFamily(name, help, kind);
      const shown = family;
      this.registry?.registerMetric({ name, help, type: kind, get: async () => shown.collect(), reset: () => undefined } as unknown as Metric);
      this.families.set(name, family);
    }
    family.refs++;
    return family;
  }

  /** A holder let go of the family: with no holder left it leaves /metrics, with its series. */
  releaseFamily(family: CustomMetricFamily): void {
    if (--family.refs > 0 || this.families.get(family.name) !== family) return;
    this.families.delete(family.name);
    this.registry?.removeSingleMetric(family.name);
  }

  /** The family named so, while someone holds it (tests). */
  get(name: string): CustomMetricFamily | undefined {
    return this.families.get(name);
  }
}
