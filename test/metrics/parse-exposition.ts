// A small reader of the Prometheus text format for tests: families with HELP, TYPE and samples.

export interface ExpositionSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  line: string;
}
export interface ExpositionFamily {
  help?: string;
  type?: string;
  samples: ExpositionSample[];
}

export function parseExposition(text: string): Map<string, ExpositionFamily> {
  const families = new Map<string, ExpositionFamily>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { samples: [] }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
    if (meta) {
      const [, kind, name = '', rest = ''] = meta;
      if (kind === 'HELP') family(name).help = rest;
      else family(name).type = rest;
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!sample) throw new Error(`not an exposition line: ${line}`);
    const [, name = '', labelText = '', value = ''] = sample;
    const labels: Record<string, string> = {};
    for (const m of labelText.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    // Histogram/summary children (_bucket, _sum, _count) belong to the family named without the suffix.
    const base = families.has(name) ? name : name.replace(/_(bucket|sum|count)$/, '');
    family(families.has(base) ? base : name).samples.push({ name, labels, value: Number(value), line });
  }
  return families;
}

/** The value of the one sample of `family` whose labels include `labels`. */
export function sampleValue(families: Map<string, ExpositionFamily>, family: string, labels: Record<string, string> = {}): number | undefined {
  const matches = (families.get(family)?.samples ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (matches.length > 1) throw new Error(`${family} ${JSON.stringify(labels)} matches ${matches.length} samples`);
  return matches[0]?.value;
}
