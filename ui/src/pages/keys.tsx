// Keys: the list (search, revoked too, pages), create with the secret shown once, and per key block,
// unblock, rotate, revoke and edit limits and budget (admin only; a viewer sees the list).
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { Badge, EmptyRow, ErrorNote, Heading, Loaded, Pager, ScrollRegion } from '../components.tsx';
import { money, time } from '../format.ts';
import { useLoad } from '../hooks.ts';
import { useIsAdmin, useSession } from '../session.ts';
import type { KeyJson, Page } from '../types.ts';
import { CreateKeyForm, KeyActions, keyUrl, type Secret } from './key-forms.tsx';
import { EditLimitsForm } from './policy-form.tsx';
import { policySummary } from './policy-form.tsx';
import { SecretOnce } from './secret-once.tsx';

const STATE_TONE = { active: 'ok', blocked: 'warn', expired: 'warn', revoked: 'bad' } as const;

export function KeysPage() {
  const admin = useIsAdmin();
  const [search, setSearch] = useState('');
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const [cursors, setCursors] = useState<string[]>([]);
  const [secret, setSecret] = useState<Secret | undefined>(undefined);
  const cursor = cursors[cursors.length - 1];
  const state = useLoad(
    (signal) => api<Page<KeyJson>>(`../admin/v1/keys${query({ search, include_revoked: includeRevoked ? 'true' : undefined, limit: 50, cursor })}`, { signal }),
    [search, includeRevoked, cursor],
  );
  const changed = (next?: Secret) => {
    if (next) setSecret(next);
    state.reload();
  };
  return (
    <>
      <Heading>Keys</Heading>
      {secret && <SecretOnce title={secret.title} secret={secret.secret} note={secret.note} onDone={() => setSecret(undefined)} />}
      {admin && <CreateKeyForm onCreated={changed} />}
      <section aria-labelledby="key-list-heading">
        <h2 id="key-list-heading">All keys</h2>
        <form class="filters" onSubmit={(e) => e.preventDefault()}>
          <div class="field">
            <label for="key-search">Search keys</label>
            <input
              id="key-search"
              type="search"
              value={search}
              onInput={(e) => {
                setSearch(e.currentTarget.value);
                setCursors([]);
              }}
            />
          </div>
          <div class="field inline">
            <input
              id="key-revoked"
              type="checkbox"
              checked={includeRevoked}
              onChange={(e) => {
                setIncludeRevoked(e.currentTarget.checked);
                setCursors([]);
              }}
            />
            <label for="key-revoked">Include revoked keys</label>
          </div>
        </form>
        <Loaded state={state} what="the keys">
          {(page) => (
            <>
              <KeyTable keys={page.data} onChanged={changed} />
              <Pager cursors={cursors} next={page.next_cursor} onChange={setCursors} />
            </>
          )}
        </Loaded>
      </section>
    </>
  );
}

function KeyTable({ keys, onChanged }: { keys: KeyJson[]; onChanged: (secret?: Secret) => void }) {
  const admin = useIsAdmin();
  const currency = useSession().server.currency;
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const columns = admin ? 9 : 8;
  return (
    <>
      <ErrorNote error={error} />
      <ScrollRegion label="Keys table">
        <table>
          <caption>Keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Role</th>
              <th scope="col">Team</th>
              <th scope="col">State</th>
              <th scope="col">Limits and budgets</th>
              <th scope="col">Spend this period</th>
              <th scope="col">Last used</th>
              {admin && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.length === 0 && <EmptyRow columns={columns} text="No keys." />}
            {keys.map((key) => (
              <KeyRow key={key.id} apiKey={key} currency={currency} editing={editing === key.id} onEdit={setEditing} onChanged={onChanged} onError={setError} />
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </>
  );
}

interface RowProps {
  apiKey: KeyJson;
  currency: string | null;
  editing: boolean;
  onEdit: (id: string | undefined) => void;
  onChanged: (secret?: Secret) => void;
  onError: (error: string | undefined) => void;
}

function KeyRow({ apiKey: key, currency, editing, onEdit, onChanged, onError }: RowProps) {
  const admin = useIsAdmin();
  return (
    <>
      <tr>
        <th scope="row">{key.name}</th>
        <td>
          <code>{key.prefix}</code>
        </td>
        <td>{key.role}</td>
        <td>{key.team?.name ?? '—'}</td>
        <td>
          <Badge tone={STATE_TONE[key.state] ?? 'plain'}>{key.state}</Badge>
        </td>
        <td>{policySummary(key, currency)}</td>
        <td>{key.spend ? `${money(key.spend.spent_micros, currency)} of ${money(key.spend.limit_micros, currency)} this ${key.spend.period}` : '—'}</td>
        <td>{time(key.last_used_at)}</td>
        {admin && (
          <td class="actions">
            <KeyActions apiKey={key} editing={editing} onEdit={onEdit} onChanged={onChanged} onError={onError} />
          </td>
        )}
      </tr>
      {admin && editing && (
        <tr>
          <td colSpan={9}>
            <EditLimitsForm owner={key} url={keyUrl(key)} prefix={`edit-key-${key.id}`} onDone={() => onEdit(undefined)} onChanged={onChanged} />
          </td>
        </tr>
      )}
    </>
  );
}
