// Teams: the list (search, pages), create, edit limits and budget, delete (refused by the server while
// the team has live keys; the page shows its words). Admin only for changes.
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { api, query } from '../api.ts';
import { EmptyRow, ErrorNote, Heading, Loaded, Pager } from '../components.tsx';
import { time } from '../format.ts';
import { useAction, useLoad } from '../hooks.ts';
import { useIsAdmin, useSession } from '../session.ts';
import type { Page, TeamJson } from '../types.ts';
import { EditLimitsForm, EMPTY_POLICY, PolicyInputs, policyBody, policySummary } from './policy-form.tsx';

const teamUrl = (team: TeamJson) => `../admin/v1/teams/${encodeURIComponent(team.id)}`;

export function TeamsPage() {
  const admin = useIsAdmin();
  const [search, setSearch] = useState('');
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const state = useLoad((signal) => api<Page<TeamJson>>(`../admin/v1/teams${query({ search, limit: 50, cursor })}`, { signal }), [search, cursor]);
  return (
    <>
      <Heading>Teams</Heading>
      {admin && <CreateTeamForm onCreated={state.reload} />}
      <section aria-labelledby="team-list-heading">
        <h2 id="team-list-heading">All teams</h2>
        <div class="filters">
          <div class="field">
            <label for="team-search">Search teams</label>
            <input
              id="team-search"
              type="search"
              value={search}
              onInput={(e) => {
                setSearch(e.currentTarget.value);
                setCursors([]);
              }}
            />
          </div>
        </div>
        <Loaded state={state} what="the teams">
          {(page) => (
            <>
              <TeamTable teams={page.data} onChanged={state.reload} />
              <Pager cursors={cursors} next={page.next_cursor} onChange={setCursors} />
            </>
          )}
        </Loaded>
      </section>
    </>
  );
}

function CreateTeamForm({ onCreated }: { onCreated: () => void }) {
  const currency = useSession().server.currency;
  const [name, setName] = useState('');
  const [policy, setPolicy] = useState(EMPTY_POLICY);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    void action.run(async () => {
      await api('../admin/v1/teams', { method: 'POST', body: { name: name.trim(), ...policyBody(policy, false) }, idempotent: true });
      setName('');
      setPolicy(EMPTY_POLICY);
      onCreated();
    });
  };
  return (
    <section aria-labelledby="create-team-heading">
      <h2 id="create-team-heading">Create a team</h2>
      <form class="grid-form" aria-labelledby="create-team-heading" onSubmit={submit}>
        <div class="field">
          <label for="new-team-name">Team name</label>
          <input id="new-team-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <PolicyInputs fields={policy} onChange={setPolicy} prefix="new-team" currency={currency} />
        <div class="form-actions">
          <button type="submit" disabled={action.busy}>
            Create team
          </button>
        </div>
      </form>
      <ErrorNote error={action.error} />
    </section>
  );
}

function TeamTable({ teams, onChanged }: { teams: TeamJson[]; onChanged: () => void }) {
  const admin = useIsAdmin();
  const currency = useSession().server.currency;
  const [editing, setEditing] = useState<string | undefined>(undefined);
  const action = useAction();
  const [confirming, setConfirming] = useState<string | undefined>(undefined);
  const remove = (team: TeamJson) =>
    action.run(async () => {
      setConfirming(undefined);
      await api(teamUrl(team), { method: 'DELETE' });
      onChanged();
    });
  return (
    <>
      <ErrorNote error={action.error} />
      <table>
        <caption>Teams</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Allowed models</th>
            <th scope="col">Limits and budgets</th>
            <th scope="col">Created</th>
            {admin && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {teams.length === 0 && <EmptyRow columns={admin ? 5 : 4} text="No teams." />}
          {teams.map((team) => (
            <Fragment key={team.id}>
              <tr>
                <th scope="row">{team.name}</th>
                <td>{team.allowed_models === '*' ? 'all' : team.allowed_models.join(', ') || 'none'}</td>
                <td>{policySummary(team, currency)}</td>
                <td>{time(team.created_at)}</td>
                {admin && (
                  <td class="actions">
                    {confirming === team.id ? (
                      <>
                        <button type="button" class="danger" aria-label={`Confirm delete ${team.name}`} disabled={action.busy} onClick={() => remove(team)}>
                          Confirm delete
                        </button>
                        <button type="button" aria-label={`Cancel delete ${team.name}`} onClick={() => setConfirming(undefined)}>
                          Cancel
                        </button>
                      </>
                    ) : (
                      <>
                        <button
                          type="button"
                          aria-label={`Edit limits of ${team.name}`}
                          aria-expanded={editing === team.id}
                          onClick={() => setEditing(editing === team.id ? undefined : team.id)}
                        >
                          Edit limits
                        </button>
                        <button type="button" class="danger" aria-label={`Delete ${team.name}`} onClick={() => setConfirming(team.id)}>
                          Delete
                        </button>
                      </>
                    )}
                  </td>
                )}
              </tr>
              {admin && editing === team.id && (
                <tr>
                  <td colSpan={5}>
                    <EditLimitsForm owner={team} url={teamUrl(team)} prefix={`edit-team-${team.id}`} onDone={() => setEditing(undefined)} onChanged={onChanged} />
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </table>
    </>
  );
}
