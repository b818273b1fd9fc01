// One request: who, which route and deployment answered, status, timings, tokens, cost (in the ledger's
// currency and USD list price), cache hit, and every attempt (fallbacks included).
import { api } from '../api.ts';
import { EmptyRow, Heading, Loaded, Stats } from '../components.tsx';
import { count, money, ms, orDash, time } from '../format.ts';
import { useLoad } from '../hooks.ts';
import type { AttemptJson, RequestDetailJson } from '../types.ts';

export function RequestDetailPage({ id }: { id: string }) {
  const state = useLoad((signal) => api<RequestDetailJson>(`../admin/v1/requests/${encodeURIComponent(id)}`, { signal }), [id]);
  return (
    <>
      <Heading>Request detail</Heading>
      <p>
        <a href="#/requests">Back to requests</a>
      </p>
      <p>
        Request <code>{id}</code>
      </p>
      <Loaded state={state} what="the request">
        {(r) => (
          <>
            <Stats
              items={[
                ['Status', `${r.status}${r.http_status ? ` (${r.http_status})` : ''}`],
                ['Key', `${r.key_name ?? r.key_id}${r.team_name ? ` (team ${r.team_name})` : ''}`],
                ['Requested model', r.requested_model],
                ['Route', orDash(r.route)],
                ['Answered by', r.model ? `${r.model} via ${orDash(r.provider)} (${orDash(r.upstream_model)})` : '—'],
                ['Dialect', r.dialect ?? 'openai-chat'],
                ['Origin', orDash(r.origin)],
                ['Trace id', orDash(r.trace_id)],
                ['Priority', orDash(r.priority)],
                ['Started', time(r.started_at)],
                ['Finished', time(r.finished_at)],
                ['Latency', ms(r.latency_ms)],
                ['Time to first token', ms(r.ttft_ms)],
                ['Cache hit', r.cache_hit ? 'yes' : 'no'],
                ['Prompt tokens', `${count(r.prompt_tokens)}${r.cached_prompt_tokens ? ` (${count(r.cached_prompt_tokens)} cached)` : ''}`],
                ['Completion tokens', `${count(r.completion_tokens)}${r.reasoning_tokens ? ` (${count(r.reasoning_tokens)} reasoning)` : ''}`],
                ['Estimated tokens', r.estimated ? 'yes' : 'no'],
                ['Cost', money(r.cost_micros, r.currency)],
                ['Cost (USD)', money(r.usd_micros, 'USD')],
                ['USD list price', money(r.list_usd_micros, 'USD')],
                ['Saved by caching', money(r.saved_micros, r.currency)],
              ]}
            />
            <AttemptTable attempts={Array.isArray(r.attempts) ? r.attempts : []} />
          </>
        )}
      </Loaded>
    </>
  );
}

function AttemptTable({ attempts }: { attempts: AttemptJson[] }) {
  return (
    <table>
      <caption>Attempts (fallbacks and retries in order)</caption>
      <thead>
        <tr>
          <th scope="col">Attempt</th>
          <th scope="col">Model</th>
          <th scope="col">Provider</th>
          <th scope="col">Upstream model</th>
          <th scope="col">Outcome</th>
          <th scope="col">Latency</th>
          <th scope="col">Tokens in / out</th>
          <th scope="col">Cost</th>
        </tr>
      </thead>
      <tbody>
        {attempts.length === 0 && <EmptyRow columns={8} text="No upstream attempt (answered from the cache or refused before one)." />}
        {attempts.map((a) => (
          <tr key={a.attempt}>
            <th scope="row">{a.attempt}</th>
            <td>{orDash(a.model)}</td>
            <td>{orDash(a.provider)}</td>
            <td>{orDash(a.upstream_model)}</td>
            <td>
              {a.outcome}
              {a.http_status ? ` (${a.http_status})` : ''}
            </td>
            <td class="num">{ms(a.latency_ms)}</td>
            <td class="num">
              {count(a.prompt_tokens)} / {count(a.completion_tokens)}
            </td>
            <td class="num">{money(a.cost_micros, a.currency)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
