// prom-client metrics whose values are read from a source at scrape time instead of being
// incremented as events happen: the exposition keeps the true TYPE (counter or gauge).
import { Counter, Gauge, type Registry } from 'prom-client';

export interface Sample<L extends string> {
  labels: Readonly<Record<L, string>>;
  value: number;
}

export interface ComputedMetricOptions<L extends string> {
  registry: Registry;
  name: string;
  help: string;
  labelNames: readonly L[];
  /** Called once per scrape of this metric; every sample it yields becomes one series. */
  read: () => Iterable<Sample<L>>;
  /**
   * Samples may carry labels beyond `labelNames` (Triton's metric_tags become `_<key>` labels, known only
   * once a model loads); each new name is admitted at scrape time.
   */
  extraLabels?: boolean;
}

/**
 * prom-client fixes a metric's label names at construction and checks every sample against them (and
 * hashes series by the sorted names). Adding a name to both lists is what its constructor would have done.
 */
function admitLabels(metric: unknown, labels: Readonly<Record<string, string>>): void {
  const m = metric as { labelNames: string[]; sortedLabelNames: string[] };
  let added = false;
  for (const name of Object.keys(labels)) {
    if (!m.labelNames.includes(name)) {
      m.labelNames.push(name);
      added = true;
    }
  }
  if (added) m.sortedLabelNames = [...m.labelNames].sort();
}

/**
 * A counter whose value is a cumulative total kept elsewhere. prom-client's Counter has no set(),
 * so collect() resets it and increments each series from zero: the scrape shows exactly the
 * source's totals, and series whose source disappeared (an unloaded model) disappear with it.
 */
export function createComputedCounter<L extends string>(options: ComputedMetricOptions<L>): Counter<L> {
  const { name, read } = options;
  return new Counter<L>({
    name,
    help: options.help,
    labelNames: [...options.labelNames],
    registers: [options.registry],
    collect() {
      this.reset();
      for (const sample of read()) {
        if (options.extraLabels) admitLabels(this, sample.labels);
        // Checked here so a bad value names its metric; prom-client's own error does not.
        if (!Number.isFinite(sample.value) || sample.value < 0) {
          throw new Error(`${name}${JSON.stringify(sample.labels)}: a counter needs a finite value >= 0, got ${sample.value}`);
        }
        // inc(labels, 0) creates the series at 0 (only an omitted value means 1).
        this.inc(sample.labels as Partial<Record<L, string>>, sample.value);
      }
    },
  });
}

/** A gauge whose current value is read from a source at scrape time. */
export function createComputedGauge<L extends string>(options: ComputedMetricOptions<L>): Gauge<L> {
  const { name, read } = options;
  return new Gauge<L>({
    name,
    help: options.help,
    labelNames: [...options.labelNames],
    registers: [options.registry],
    collect() {
      this.reset();
      for (const sample of read()) {
        if (options.extraLabels) admitLabels(this, sample.labels);
        if (Number.isNaN(sample.value)) throw new Error(`${name}${JSON.stringify(sample.labels)}: a gauge value must be a number, got NaN`);
        this.set(sample.labels as Partial<Record<L, string>>, sample.value);
      }
    },
  });
}
