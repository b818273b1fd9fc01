// Audit: the audit log's events, newest first, filtered by action, object, actor and time; pages.
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { EmptyRow, Heading, JsonBlock, Loaded, Pager, ScrollRegion } from '../components.tsx';
import { time } from '../format.ts';
import { useLoad } from '../hooks.ts';
import type { AuditJson, Page } from '../types.ts';

interface AuditFilters {
  action: string;
  object: string;
  actor: string;
  since: string;
}

const EMPTY: AuditFilters = { action: '', object: '', actor: '', since: '' };
const LABELS: Record<keyof AuditFilters, string> = { action: 'Action', object: 'Object', actor: 'Actor id', since: 'Since' };

export function AuditPage() {
  const [filters, setFilters] = useState(EMPTY);
  const [draft, setDraft] = useState(EMPTY);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const state = useLoad((signal) => api<Page<AuditJson>>(`../admin/v1/audit${query({ ...filters, limit: 50, cursor })}`, { signal }), [JSON.stringify(filters), cursor]);
  const apply = (event: Event) => {
    event.preventDefault();
    setFilters(draft);
    setCursors([]);
  };
  return (
    <>
      <Heading>Audit</Heading>
      <form class="filters" onSubmit={apply} aria-label="Audit filters">
        {(Object.keys(LABELS) as (keyof AuditFilters)[]).map((name) => (
          <div class="field" key={name}>
            <label for={`audit-${name}`}>{LABELS[name]}</label>
            <input
              id={`audit-${name}`}
              value={draft[name]}
              placeholder={name === 'since' ? '7d, 24h or a date' : name === 'action' ? 'key.create' : ''}
              onInput={(e) => setDraft({ ...draft, [name]: e.currentTarget.value })}
            />
          </div>
        ))}
        <div class="form-actions">
          <button type="submit">Apply filters</button>
        </div>
      </form>
      <Loaded state={state} what="the audit log">
        {(page) => (
          <>
            <AuditTable events={page.data} />
            <Pager cursors={cursors} next={page.next_cursor} onChange={setCursors} />
          </>
        )}
      </Loaded>
    </>
  );
}

function AuditTable({ events }: { events: AuditJson[] }) {
  return (
    <ScrollRegion label="Audit table">
      <table>
        <caption>Audit events, newest first</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Time</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Object</th>
            <th scope="col">Count</th>
            <th scope="col">Source address</th>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {events.length === 0 && <EmptyRow columns={8} text="No audit events match." />}
          {events.map((e) => (
            <tr key={e.seq}>
              <th scope="row">{e.seq}</th>
              <td>{time(e.at)}</td>
              <td>{e.actor_name}</td>
              <td>{e.action}</td>
              <td>{e.object}</td>
              <td class="num">{e.count}</td>
              <td>{e.source_ip ?? '—'}</td>
              <td>{e.before === null && e.after === null ? '—' : <JsonBlock value={{ before: e.before, after: e.after }} summary={`Change ${e.seq}`} />}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
