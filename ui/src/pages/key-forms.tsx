// The key forms: create (name, role, team, expiry, limits and budget), the row's actions (edit limits,
// block or unblock, rotate, revoke after a confirm step) and the edit form; admin only.
import { useState } from 'preact/hooks';
import { api } from '../api.ts';
import { ErrorNote } from '../components.tsx';
import { time } from '../format.ts';
import { useAction } from '../hooks.ts';
import { useSession } from '../session.ts';
import type { KeyJson } from '../types.ts';
import { EMPTY_POLICY, PolicyInputs, policyBody } from './policy-form.tsx';

export interface Secret {
  title: string;
  secret: string;
  note?: string;
}

export const keyUrl = (key: KeyJson) => `../admin/v1/keys/${encodeURIComponent(key.id)}`;

export function CreateKeyForm({ onCreated }: { onCreated: (secret: Secret) => void }) {
  const currency = useSession().server.currency;
  const [name, setName] = useState('');
  const [role, setRole] = useState('client');
  const [team, setTeam] = useState('');
  const [expires, setExpires] = useState('');
  const [policy, setPolicy] = useState(EMPTY_POLICY);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      const body: Record<string, unknown> = { name: name.trim(), role, ...policyBody(policy, false) };
      if (team.trim()) body.team = team.trim();
      if (expires.trim()) body.expires_at = expires.trim();
      const created = await api<{ key: KeyJson; secret: string }>('../admin/v1/keys', { method: 'POST', body, idempotent: true });
      setName('');
      setTeam('');
      setExpires('');
      setPolicy(EMPTY_POLICY);
      onCreated({ title: `Secret of the new key ${created.key.name}`, secret: created.secret });
    });
  };
  return (
    <section aria-labelledby="create-key-heading">
      <h2 id="create-key-heading">Create a key</h2>
      <form class="grid-form" aria-labelledby="create-key-heading" onSubmit={submit}>
        <div class="field">
          <label for="new-key-name">Key name</label>
          <input id="new-key-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="new-key-role">Role</label>
          <select id="new-key-role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            <option value="client">client</option>
            <option value="manager">manager</option>
            <option value="viewer">viewer</option>
            <option value="admin">admin</option>
          </select>
        </div>
        <div class="field">
          <label for="new-key-team">Team</label>
          <input id="new-key-team" value={team} onInput={(e) => setTeam(e.currentTarget.value)} />
          <small class="muted">team id or name; empty: none</small>
        </div>
        <div class="field">
          <label for="new-key-expires">Expires</label>
          <input id="new-key-expires" value={expires} placeholder="30d or 2027-01-01" onInput={(e) => setExpires(e.currentTarget.value)} />
        </div>
        <PolicyInputs fields={policy} onChange={setPolicy} prefix="new-key" currency={currency} />
        <div class="form-actions">
          <button type="submit" disabled={action.busy}>
            Create key
          </button>
        </div>
      </form>
      <ErrorNote error={action.error} />
    </section>
  );
}

interface ActionProps {
  apiKey: KeyJson;
  editing: boolean;
  onEdit: (id: string | undefined) => void;
  onChanged: (secret?: Secret) => void;
  onError: (error: string | undefined) => void;
}

export function KeyActions({ apiKey: key, editing, onEdit, onChanged, onError }: ActionProps) {
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const run = async (work: () => Promise<Secret | undefined>) => {
    setBusy(true);
    onError(undefined);
    try {
      onChanged(await work());
    } catch (caught) {
      onError(`${key.name}: ${caught instanceof Error ? caught.message : String(caught)}`);
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };
  if (key.state === 'revoked') return <span class="muted">revoked {time(key.revoked_at ?? null)}</span>;
  const block = () => run(async () => void (await api(`${keyUrl(key)}/${key.blocked ? 'unblock' : 'block'}`, { method: 'POST', body: {} })));
  const rotate = () =>
    run(async () => {
      const rotated = await api<{ key: KeyJson; secret: string; grace_until: string }>(`${keyUrl(key)}/rotate`, { method: 'POST', body: {}, idempotent: true });
      return { title: `New secret of the key ${key.name}`, secret: rotated.secret, note: `The old secret keeps working until ${time(rotated.grace_until)}.` };
    });
  const revoke = () => run(async () => void (await api(keyUrl(key), { method: 'DELETE' })));
  if (confirming)
    return (
      <>
        <button type="button" class="danger" aria-label={`Confirm revoke ${key.name}`} disabled={busy} onClick={revoke}>
          Confirm revoke
        </button>
        <button type="button" aria-label={`Cancel revoke ${key.name}`} onClick={() => setConfirming(false)}>
          Cancel
        </button>
      </>
    );
  return (
    <>
      <button type="button" aria-label={`Edit limits of ${key.name}`} aria-expanded={editing} onClick={() => onEdit(editing ? undefined : key.id)}>
        Edit limits
      </button>
      <button type="button" aria-label={`${key.blocked ? 'Unblock' : 'Block'} ${key.name}`} disabled={busy} onClick={block}>
        {key.blocked ? 'Unblock' : 'Block'}
      </button>
      <button type="button" aria-label={`Rotate ${key.name}`} disabled={busy} onClick={rotate}>
        Rotate
      </button>
      <button type="button" class="danger" aria-label={`Revoke ${key.name}`} disabled={busy} onClick={() => setConfirming(true)}>
        Revoke
      </button>
    </>
  );
}
