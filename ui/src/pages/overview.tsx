// Overview: readiness, models, live traffic (60 s), spend today and this month with the USD list price and
// the saving, top keys and models. Polls GET ../admin/v1/overview every 5 s while the tab is visible.
import { api } from '../api.ts';
import { LineChart } from '../chart.tsx';
import { Badge, EmptyRow, Heading, Loaded, Stats } from '../components.tsx';
import { count, money, ms, rate } from '../format.ts';
import { useLoad } from '../hooks.ts';
import type { OverviewJson, Totals } from '../types.ts';

export function OverviewPage() {
  const state = useLoad((signal) => api<OverviewJson>('../admin/v1/overview', { signal }), [], 5000);
  return (
    <>
      <Heading>Overview</Heading>
      <Loaded state={state} what="the overview">
        {(data) => <OverviewBody data={data} />}
      </Loaded>
    </>
  );
}

function OverviewBody({ data }: { data: OverviewJson }) {
  const { traffic } = data;
  const series = traffic.series ?? [];
  return (
    <>
      <section aria-labelledby="health-heading">
        <h2 id="health-heading">Health</h2>
        <Stats
          items={[
            ['Ready', <Badge tone={data.ready ? 'ok' : 'bad'}>{data.ready ? 'Ready' : 'Not ready'}</Badge>],
            ['Models ready', count(data.models.ready)],
            ['Models failed', count(data.models.failed)],
            ['Models in total', count(data.models.total)],
            ['Inferences per second', rate(data.serving?.inferences_per_sec)],
          ]}
        />
      </section>
      <section aria-labelledby="traffic-heading">
        <h2 id="traffic-heading">Gateway traffic, last {traffic.window_secs} s</h2>
        <Stats
          items={[
            ['Requests per second', rate(traffic.requests_per_sec)],
            ['Errors per second', rate(traffic.errors_per_sec)],
            ['p50 latency', ms(traffic.p50_ms)],
            ['p99 latency', ms(traffic.p99_ms)],
          ]}
        />
        {series.length > 0 && (
          <LineChart
            label={`Requests and errors per 5 seconds over the last ${traffic.window_secs} seconds`}
            lines={[
              { name: 'Requests', values: series.map((s) => s.requests), tone: 'a' },
              { name: 'Errors', values: series.map((s) => s.errors), tone: 'c' },
            ]}
            from={`-${traffic.window_secs} s`}
            to="now"
          />
        )}
      </section>
      <SpendSection spend={data.spend} />
      <TopTables data={data} />
    </>
  );
}

function SpendSection({ spend }: { spend: OverviewJson['spend'] }) {
  if (!spend)
    return (
      <section aria-labelledby="spend-heading">
        <h2 id="spend-heading">Spend</h2>
        <p class="muted">This server keeps no ledger: spend is not known.</p>
      </section>
    );
  const row = (name: string, t: Totals) => (
    <tr key={name}>
      <th scope="row">{name}</th>
      <td class="num">{count(t.requests)}</td>
      <td class="num">{money(t.cost_micros, spend.currency)}</td>
      <td class="num">{money(t.usd_micros, 'USD')}</td>
      <td class="num">{money(t.list_usd_micros, 'USD')}</td>
      <td class="num">{money(t.saving_usd_micros, 'USD')}</td>
    </tr>
  );
  return (
    <section aria-labelledby="spend-heading">
      <h2 id="spend-heading">Spend</h2>
      <table>
        <caption>Spend in {spend.currency}, in USD, at USD list price, and the saving against the list price</caption>
        <thead>
          <tr>
            <th scope="col">Period</th>
            <th scope="col">Requests</th>
            <th scope="col">Cost ({spend.currency})</th>
            <th scope="col">Cost (USD)</th>
            <th scope="col">USD list price</th>
            <th scope="col">Saving (USD)</th>
          </tr>
        </thead>
        <tbody>
          {row('Today', spend.today)}
          {row('This month', spend.month)}
        </tbody>
      </table>
    </section>
  );
}

function TopTables({ data }: { data: OverviewJson }) {
  const currency = data.spend?.currency ?? null;
  return (
    <section aria-labelledby="top-heading">
      <h2 id="top-heading">Top keys and models</h2>
      <div class="columns">
        <table>
          <caption>Top keys</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Requests</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {data.top_keys.length === 0 && <EmptyRow columns={3} />}
            {data.top_keys.map((k) => (
              <tr key={k.id}>
                <th scope="row">{k.name ?? k.id}</th>
                <td class="num">{count(k.requests)}</td>
                <td class="num">{money(k.cost_micros, currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <table>
          <caption>Top models</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Requests</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {data.top_models.length === 0 && <EmptyRow columns={3} />}
            {data.top_models.map((m) => (
              <tr key={m.model}>
                <th scope="row">{m.model}</th>
                <td class="num">{count(m.requests)}</td>
                <td class="num">{money(m.cost_micros, currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
