// Requests: the ledger's latest rows with filters (key, model, status, dialect, since), pages, and a live
// tail over SSE (EventSource on ../admin/v1/requests/tail with the same filters, bounded in the page).
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Heading, Loaded, Pager } from '../components.tsx';
import { useLoad } from '../hooks.ts';
import type { Page, RequestJson } from '../types.ts';
import { LiveTail } from './live-tail.tsx';
import { RequestTable } from './request-table.tsx';

export interface RequestFilters {
  key: string;
  model: string;
  status: string;
  dialect: string;
  since: string;
}

const EMPTY: RequestFilters = { key: '', model: '', status: '', dialect: '', since: '' };
const DIALECTS = ['openai-chat', 'anthropic-messages', 'openai-responses', 'openai-completions', 'openai-embeddings'];

export function RequestsPage() {
  const [filters, setFilters] = useState(EMPTY);
  const [draft, setDraft] = useState(EMPTY);
  const [live, setLive] = useState(false);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const { since, ...tailFilters } = filters;
  const state = useLoad(
    (signal) => (live ? Promise.resolve(undefined) : api<Page<RequestJson>>(`../admin/v1/requests${query({ ...filters, limit: 50, cursor })}`, { signal })),
    [JSON.stringify(filters), cursor, live],
  );
  const apply = (event: Event) => {
    event.preventDefault();
    setFilters(draft);
    setCursors([]);
  };
  return (
    <>
      <Heading>Requests</Heading>
      <form class="filters" onSubmit={apply} aria-label="Request filters">
        {(['key', 'model', 'status'] as const).map((name) => (
          <div class="field" key={name}>
            <label for={`requests-${name}`}>{name === 'key' ? 'Key' : name === 'model' ? 'Model' : 'Status'}</label>
            <input
              id={`requests-${name}`}
              value={draft[name]}
              placeholder={name === 'status' ? 'ok, error or a status' : name === 'key' ? 'key id' : ''}
              onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })}
            />
          </div>
        ))}
        <div class="field">
          <label for="requests-dialect">Dialect</label>
          <select id="requests-dialect" value={draft.dialect} onChange={(e) => setDraft({ ...draft, dialect: e.currentTarget.value })}>
            <option value="">any</option>
            {DIALECTS.map((d) => (
              <option key={d} value={d}>
                {d}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="requests-since">Since</label>
          <select id="requests-since" value={draft.since} onChange={(e) => setDraft({ ...draft, since: e.currentTarget.value })}>
            <option value="">any time</option>
            <option value="1h">last hour</option>
            <option value="24h">last 24 hours</option>
            <option value="7d">last 7 days</option>
            <option value="30d">last 30 days</option>
          </select>
        </div>
        <div class="form-actions">
          <button type="submit">Apply filters</button>
        </div>
        <div class="field inline">
          <input id="requests-live" type="checkbox" checked={live} onChange={(e) => setLive(e.currentTarget.checked)} />
          <label for="requests-live">Live tail</label>
        </div>
      </form>
      {live ? (
        <LiveTail filters={tailFilters} />
      ) : (
        <Loaded state={state} what="the requests">
          {(page) =>
            page && (
              <>
                <RequestTable rows={page.data} caption={since ? `Requests of the last ${since}, newest first` : 'Latest requests, newest first'} />
                <Pager cursors={cursors} next={page.next_cursor} onChange={setCursors} />
              </>
            )
          }
        </Loaded>
      )}
    </>
  );
}
