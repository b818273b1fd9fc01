// Teams: create, update, delete (refused while it has live keys), find by id or name; each change with its
// audit row, in the store's change transaction. A team's policy reaches its keys through KeyInfo.team.
import { HerdError } from '../../core/errors.ts';
import type { SqlRunner } from '../storage/sql-driver.ts';
import { appendAuditEvents } from './audit-log.ts';
import { createPublicId } from './create-key-secret.ts';
import type { ChangeContext, StoredTeam, TeamFields, TeamPatch } from './key-store.ts';
import { convertTeamRow, serializePolicy, TEAM_SELECT, type TeamRow } from './key-rows.ts';
import { quoteUntrusted } from './mask-key.ts';
import { presentOnly, validateTeamFields } from './validate-key-fields.ts';

export async function findTeamByRef(db: SqlRunner, rawRef: string): Promise<StoredTeam> {
  const ref = rawRef.trim();
  const [row] = await db.query<TeamRow>(`${TEAM_SELECT} WHERE id = ? OR name = ? ORDER BY CASE WHEN id = ? THEN 0 ELSE 1 END LIMIT 1`, [ref, ref, ref]);
  if (!row) throw new HerdError('NOT_FOUND', `no team has the id or name ${quoteUntrusted(ref)} (see herd teams list)`, { param: 'team' });
  return convertTeamRow(row);
}

export async function createTeamIn(tx: SqlRunner, fields: TeamFields, ctx: ChangeContext, now: number, rev: number): Promise<StoredTeam> {
  const valid = validateTeamFields(fields);
  await checkTeamNameFree(tx, valid.name, '');
  const id = createPublicId('tm');
  await tx.query('INSERT INTO gateway_teams (id, name, policy, created_at, updated_at, revision) VALUES (?, ?, ?, ?, ?, ?)', [
    id,
    valid.name,
    serializePolicy(valid.policy),
    now,
    now,
    rev,
  ]);
  const team = await findTeamByRef(tx, id);
  await appendAuditEvents(tx, [{ action: 'team.create', object: `team:${id}`, after: team }], ctx, now);
  return team;
}

export async function updateTeamIn(tx: SqlRunner, ref: string, patch: TeamPatch, ctx: ChangeContext, now: number, rev: number): Promise<StoredTeam> {
  const found = await findTeamByRef(tx, ref);
  await tx.query('UPDATE gateway_teams SET updated_at = updated_at WHERE id = ?', [found.id]);
  const before = await findTeamByRef(tx, found.id);
  const merged = { ...before, ...presentOnly(patch) };
  const fields = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== null)) as unknown as TeamFields;
  const valid = validateTeamFields(fields, patch.name != null);
  if (valid.name !== before.name) await checkTeamNameFree(tx, valid.name, before.id);
  await tx.query('UPDATE gateway_teams SET name = ?, policy = ?, updated_at = ?, revision = ? WHERE id = ?', [valid.name, serializePolicy(valid.policy), now, rev, before.id]);
  const after = await findTeamByRef(tx, before.id);
  await appendAuditEvents(tx, [{ action: 'team.update', object: `team:${before.id}`, before, after }], ctx, now);
  return after;
}

export async function deleteTeamIn(tx: SqlRunner, ref: string, ctx: ChangeContext, now: number): Promise<StoredTeam> {
  const team = await findTeamByRef(tx, ref);
  const live = await tx.query<{ id: string }>('SELECT id FROM gateway_keys WHERE team_id = ? AND revoked_at IS NULL ORDER BY created_at LIMIT 6', [team.id]);
  if (live.length > 0) {
    const ids = live
      .slice(0, 5)
      .map((r) => r.id)
      .join(', ');
    throw new HerdError('INVALID_ARG', `team '${team.name}' still has keys that are not revoked (${ids}${live.length > 5 ? ', …' : ''}): revoke or move them first`, {
      param: 'team',
    });
  }
  // Only revoked keys point at it now: they keep its id, and are shown without a team.
  await tx.query('DELETE FROM gateway_teams WHERE id = ?', [team.id]);
  await appendAuditEvents(tx, [{ action: 'team.delete', object: `team:${team.id}`, before: team }], ctx, now);
  return team;
}

async function checkTeamNameFree(tx: SqlRunner, name: string, self: string): Promise<void> {
  const [clash] = await tx.query<{ id: string }>('SELECT id FROM gateway_teams WHERE name = ? AND id <> ?', [name, self]);
  if (clash) throw new HerdError('ALREADY_EXISTS', `a team named ${quoteUntrusted(name)} already exists (${clash.id}): choose another name`, { param: 'name' });
}
