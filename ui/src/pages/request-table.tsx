// The requests table the list and the live tail share; each request id links to its detail page.
import { EmptyRow, ScrollRegion } from '../components.tsx';
import { count, money, ms, time } from '../format.ts';
import type { RequestJson } from '../types.ts';

export function RequestTable({ rows, caption, empty = 'No requests match.' }: { rows: RequestJson[]; caption: string; empty?: string }) {
  return (
    <ScrollRegion label="Requests table">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Finished</th>
            <th scope="col">Request</th>
            <th scope="col">Key</th>
            <th scope="col">Model</th>
            <th scope="col">Provider</th>
            <th scope="col">Dialect</th>
            <th scope="col">Status</th>
            <th scope="col">Latency</th>
            <th scope="col">Tokens in / out</th>
            <th scope="col">Cost</th>
            <th scope="col">Cache</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 && <EmptyRow columns={11} text={empty} />}
          {rows.map((r) => (
            <tr key={r.request_id}>
              <td>{time(r.finished_at)}</td>
              <th scope="row">
                <a href={`#/requests/${encodeURIComponent(r.request_id)}`}>{r.request_id}</a>
              </th>
              <td>{r.key_name ?? r.key_id}</td>
              <td>{r.model ?? r.requested_model}</td>
              <td>{r.provider ?? '—'}</td>
              <td>{r.dialect ?? 'openai-chat'}</td>
              <td>
                {r.status}
                {r.http_status ? ` (${r.http_status})` : ''}
              </td>
              <td class="num">{ms(r.latency_ms)}</td>
              <td class="num">
                {count(r.prompt_tokens)} / {count(r.completion_tokens)}
              </td>
              <td class="num">{money(r.cost_micros, r.currency)}</td>
              <td>{r.cache_hit ? 'hit' : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
