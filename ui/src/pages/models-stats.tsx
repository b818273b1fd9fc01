// Per-model serving statistics (counts, average queue and compute times, batch sizes) and a chart of
// inferences per second built from the 5 s polls kept in the page (the server keeps only totals).
import { LineChart } from '../chart.tsx';
import { EmptyRow, ScrollRegion } from '../components.tsx';
import { averageMs, count } from '../format.ts';
import type { ServingStatJson } from '../types.ts';

/** Per model: (time ms, inference_count) of the last polls. */
export type History = Map<string, { t: number; total: number }[]>;

const KEEP = 25;

export function recordHistory(history: History, stats: ServingStatJson[], now: number): void {
  for (const s of stats) {
    const key = `${s.name}/${s.version}`;
    const points = history.get(key) ?? [];
    points.push({ t: now, total: s.inference_count });
    if (points.length > KEEP) points.shift();
    history.set(key, points);
  }
}

/** Per interval between polls: inferences per second. */
function ratesOf(points: { t: number; total: number }[]): number[] {
  const rates: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const seconds = (points[i].t - points[i - 1].t) / 1000;
    rates.push(seconds > 0 ? Math.max(0, points[i].total - points[i - 1].total) / seconds : 0);
  }
  return rates;
}

export function ServingStats({ stats, history }: { stats: ServingStatJson[]; history: History }) {
  const busiest = [...stats].sort((a, b) => b.inference_count - a.inference_count).slice(0, 3);
  const tones = ['a', 'b', 'c'] as const;
  const lines = busiest.map((s, i) => ({ name: `${s.name}/${s.version}`, values: ratesOf(history.get(`${s.name}/${s.version}`) ?? []), tone: tones[i] }));
  return (
    <>
      <h3>Statistics</h3>
      {lines.some((l) => l.values.length > 1) ? (
        <LineChart label="Inferences per second of the busiest models since this page opened" lines={lines} from="page opened" to="now" />
      ) : (
        <p class="muted">The chart of inferences per second fills in as the page polls (every 5 s).</p>
      )}
      <ScrollRegion label="Serving statistics table">
        <table>
          <caption>Serving statistics per model (times are averages per request or per execution)</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Version</th>
              <th scope="col">Inferences</th>
              <th scope="col">Executions</th>
              <th scope="col">Successes</th>
              <th scope="col">Failures</th>
              <th scope="col">Queue</th>
              <th scope="col">Compute input</th>
              <th scope="col">Compute infer</th>
              <th scope="col">Compute output</th>
              <th scope="col">Batch sizes (size × executions)</th>
            </tr>
          </thead>
          <tbody>
            {stats.length === 0 && <EmptyRow columns={11} text="No statistics yet." />}
            {stats.map((s) => (
              <tr key={`${s.name}/${s.version}`}>
                <th scope="row">{s.name}</th>
                <td>{s.version || '—'}</td>
                <td class="num">{count(s.inference_count)}</td>
                <td class="num">{count(s.execution_count)}</td>
                <td class="num">{count(s.success?.count)}</td>
                <td class="num">{count(s.fail?.count)}</td>
                <td class="num">{averageMs(s.queue)}</td>
                <td class="num">{averageMs(s.compute_input)}</td>
                <td class="num">{averageMs(s.compute_infer)}</td>
                <td class="num">{averageMs(s.compute_output)}</td>
                <td>{(s.batch_stats ?? []).map((b) => `${b.batch_size} × ${b.count}`).join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}
