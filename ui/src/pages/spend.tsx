// Spend: by day, key, team, model or provider over a time range; one server query per page (GET
// ../admin/v1/spend), a bar chart of the page's cost, and the CSV of the same query.
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { BarChart } from '../chart.tsx';
import { EmptyRow, Heading, Loaded, Pager, ScrollRegion } from '../components.tsx';
import { count, microsToDecimal, money, time } from '../format.ts';
import { useLoad } from '../hooks.ts';
import type { SpendJson, SpendRowJson } from '../types.ts';

const GROUPS = [
  ['key', 'Key'],
  ['day', 'Day'],
  ['team', 'Team'],
  ['model', 'Model'],
  ['provider', 'Provider'],
] as const;
const RANGES = [
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
  ['90d', 'Last 90 days'],
  ['365d', 'Last 365 days'],
  ['custom', 'Custom dates'],
] as const;

export function SpendPage() {
  const [by, setBy] = useState('key');
  const [range, setRange] = useState('7d');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  // Custom dates: from the start of `from` to the end of `to` (the server reads ISO dates; until is exclusive).
  const since = range === 'custom' ? from || undefined : range;
  const until = range === 'custom' && to ? new Date(Date.parse(to) + 86_400_000).toISOString().slice(0, 10) : undefined;
  const params = { by, since, until };
  const state = useLoad((signal) => api<SpendJson>(`../admin/v1/spend${query({ ...params, limit: 50, cursor })}`, { signal }), [by, since, until, cursor]);
  const reset =
    <T,>(set: (value: T) => void) =>
    (value: T) => {
      set(value);
      setCursors([]);
    };
  return (
    <>
      <Heading>Spend</Heading>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div class="field">
          <label for="spend-by">Group by</label>
          <select id="spend-by" value={by} onChange={(e) => reset(setBy)(e.currentTarget.value)}>
            {GROUPS.map(([value, name]) => (
              <option key={value} value={value}>
                {name}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="spend-range">Time range</label>
          <select id="spend-range" value={range} onChange={(e) => reset(setRange)(e.currentTarget.value)}>
            {RANGES.map(([value, name]) => (
              <option key={value} value={value}>
                {name}
              </option>
            ))}
          </select>
        </div>
        {range === 'custom' && (
          <>
            <div class="field">
              <label for="spend-from">From</label>
              <input id="spend-from" type="date" value={from} onChange={(e) => reset(setFrom)(e.currentTarget.value)} />
            </div>
            <div class="field">
              <label for="spend-to">To</label>
              <input id="spend-to" type="date" value={to} onChange={(e) => reset(setTo)(e.currentTarget.value)} />
            </div>
          </>
        )}
        <p class="field">
          <a href={`../admin/v1/spend.csv${query(params)}`} download>
            Download CSV
          </a>
        </p>
      </form>
      <Loaded state={state} what="spend">
        {(data) => (
          <>
            <p>
              {count(data.total_groups)} groups from {time(data.since)} to {time(data.until)}.
            </p>
            {data.data.length > 0 && (
              <BarChart
                label={`Cost by ${data.by} on this page`}
                bars={data.data.map((row) => ({ label: row.name ?? row.group, value: row.cost_micros }))}
                format={(micros) => `${data.data[0]?.currency ?? ''} ${microsToDecimal(micros)}`}
              />
            )}
            <SpendTable data={data} />
            <Pager cursors={cursors} next={data.next_cursor} onChange={setCursors} />
          </>
        )}
      </Loaded>
    </>
  );
}

function SpendTable({ data }: { data: SpendJson }) {
  const named = data.by === 'key' || data.by === 'team';
  const cell = (row: SpendRowJson) => (
    <tr key={row.group}>
      <th scope="row">{row.group}</th>
      {named && <td>{row.name ?? '—'}</td>}
      <td class="num">{count(row.requests)}</td>
      <td class="num">{count(row.failed)}</td>
      <td class="num">{count(row.cache_hits)}</td>
      <td class="num">{count(row.prompt_tokens)}</td>
      <td class="num">{count(row.completion_tokens)}</td>
      <td class="num">{money(row.cost_micros, row.currency)}</td>
      <td class="num">{money(row.usd_micros, 'USD')}</td>
      <td class="num">{money(row.list_usd_micros, 'USD')}</td>
      <td class="num">{money(row.list_usd_micros - row.usd_micros, 'USD')}</td>
    </tr>
  );
  return (
    <ScrollRegion label="Spend table">
      <table>
        <caption>Spend by {data.by}</caption>
        <thead>
          <tr>
            <th scope="col">{data.by === 'day' ? 'Day' : data.by.charAt(0).toUpperCase() + data.by.slice(1)}</th>
            {named && <th scope="col">Name</th>}
            <th scope="col">Requests</th>
            <th scope="col">Failed</th>
            <th scope="col">Cache hits</th>
            <th scope="col">Prompt tokens</th>
            <th scope="col">Completion tokens</th>
            <th scope="col">Cost</th>
            <th scope="col">Cost (USD)</th>
            <th scope="col">USD list price</th>
            <th scope="col">Saving (USD)</th>
          </tr>
        </thead>
        <tbody>
          {data.data.length === 0 && <EmptyRow columns={named ? 11 : 10} text="No spend in this range." />}
          {data.data.map(cell)}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
