// The key changes (create, update, rotate keeping the public id, block, revoke), each in the store's change
// transaction with its audit row; changed key rows are stamped with its revision (`rev`) for incremental re-reads.
import { hash } from 'node:crypto';
import { HerdError } from '../../core/errors.ts';
import type { SqlRunner, SqlValue } from '../storage/sql-driver.ts';
import { appendAuditEvents } from './audit-log.ts';
import { createKeySecret, createPublicId } from './create-key-secret.ts';
import { findKeyByRef } from './find-key.ts';
import type { ChangeContext, CreatedKey, KeyFields, KeyPatch, RevokeResult, RotatedKey, RotateOptions, StoredKey } from './key-store.ts';
import { convertKeyRow, KEY_SELECT, type KeyRow, serializePolicy } from './key-rows.ts';
import { quoteUntrusted } from './mask-key.ts';
import { seal, unseal } from './seal-replay.ts';
import { findTeamByRef } from './team-changes.ts';
import { presentOnly, type ValidKeyFields, validateKeyFields } from './validate-key-fields.ts';

export const DEFAULT_GRACE_MS = 24 * 3600_000;
const MAX_GRACE_MS = 30 * 24 * 3600_000;
/** How long a rotation's sealed secret is kept for a retry with the same rotation id. */
export const ROTATION_REPLAY_MS = 24 * 3600_000;
const MIN_ROTATION_ID = 16;

export async function createKeyIn(tx: SqlRunner, fields: KeyFields, ctx: ChangeContext, now: number, rev: number): Promise<CreatedKey> {
  const valid = validateKeyFields(fields, now);
  const teamId = await resolveTeam(tx, valid);
  await checkNameFree(tx, valid.name, teamId, undefined);
  const id = createPublicId('hk');
  const { secret, hash: secretHash, prefix } = createKeySecret(id);
  await tx.query(
    `INSERT INTO gateway_keys (id, name, team_id, prefix, role, policy, expires_at, blocked, created_at, updated_at, rotated_at, revoked_at, revision)
     VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, NULL, NULL, ?)`,
    [id, valid.name, teamId, prefix, valid.role, serializePolicy(valid.policy), valid.expiresAt ?? null, now, now, rev],
  );
  await tx.query('INSERT INTO key_secrets (hash, key_id, prefix, created_at, valid_until) VALUES (?, ?, ?, ?, NULL)', [secretHash, id, prefix, now]);
  const key = await readKey(tx, id);
  await appendAuditEvents(tx, [{ action: 'key.create', object: `key:${id}`, after: auditView(key) }], ctx, now);
  return { key, secret };
}

export async function updateKeyIn(tx: SqlRunner, ref: string, patch: KeyPatch, ctx: ChangeContext, now: number, rev: number): Promise<StoredKey> {
  const before = await lockLiveKey(tx, ref, 'update');
  const merged = { ...convertKeyToFields(before), ...presentOnly(patch) };
  // null clears a limit or the expiry; undefined leaves the field as it was.
  const fields = Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== null)) as unknown as KeyFields;
  const valid = validateKeyFields(fields, now, { name: patch.name != null, expiresAt: patch.expiresAt != null });
  const teamId = await resolveTeam(tx, valid);
  if (valid.name !== before.name || teamId !== (before.team?.id ?? null)) await checkNameFree(tx, valid.name, teamId, before.id);
  await tx.query('UPDATE gateway_keys SET name = ?, team_id = ?, role = ?, policy = ?, expires_at = ?, updated_at = ?, revision = ? WHERE id = ?', [
    valid.name,
    teamId,
    valid.role,
    serializePolicy(valid.policy),
    valid.expiresAt ?? null,
    now,
    rev,
    before.id,
  ]);
  const after = await readKey(tx, before.id);
  await appendAuditEvents(tx, [{ action: 'key.update', object: `key:${before.id}`, before: auditView(before), after: auditView(after) }], ctx, now);
  return after;
}

/**
 * A new secret; the old one (and any still in grace) keeps working until graceUntil. With a rotation id, a
 * retry within ROTATION_REPLAY_MS returns the secret minted the first time (unsealed with that id).
 */
export async function rotateKeyIn(tx: SqlRunner, ref: string, options: RotateOptions, ctx: ChangeContext, now: number, rev: number): Promise<RotatedKey> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  if (!Number.isSafeInteger(graceMs) || graceMs < 0 || graceMs > MAX_GRACE_MS) {
    throw new HerdError('INVALID_ARG', `graceMs must be a whole number of milliseconds from 0 to ${MAX_GRACE_MS} (30 days)`, { param: 'graceMs' });
  }
  const rotationId = options.rotationId;
  if (rotationId !== undefined && (rotationId.length < MIN_ROTATION_ID || rotationId.length > 200)) {
    throw new HerdError('INVALID_ARG', `a rotation id must be ${MIN_ROTATION_ID}–200 characters of randomness (e.g. a UUID): the new secret is kept for a retry sealed under it`, {
      param: 'rotationId',
    });
  }
  const before = await lockLiveKey(tx, ref, 'rotate');
  const rotationHash = rotationId === undefined ? undefined : hash('sha256', `${before.id}\n${rotationId}`, 'hex');
  if (rotationId !== undefined && rotationHash !== undefined) {
    const replay = await replayRotation(tx, before, rotationId, rotationHash);
    if (replay) return replay;
  }
  const graceUntil = now + graceMs;
  const { secret, hash: secretHash, prefix } = createKeySecret(before.id);
  // Earlier secrets still in a longer grace keep it; the current one gets this rotation's.
  await tx.query('UPDATE key_secrets SET valid_until = ? WHERE key_id = ? AND valid_until IS NULL', [graceUntil, before.id]);
  await tx.query('INSERT INTO key_secrets (hash, key_id, prefix, created_at, valid_until) VALUES (?, ?, ?, ?, NULL)', [secretHash, before.id, prefix, now]);
  await tx.query('UPDATE gateway_keys SET prefix = ?, rotated_at = ?, updated_at = ?, revision = ? WHERE id = ?', [prefix, now, now, rev, before.id]);
  await tx.query('UPDATE key_rotations SET sealed_secret = NULL WHERE created_at < ?', [now - ROTATION_REPLAY_MS]);
  if (rotationId !== undefined && rotationHash !== undefined) {
    await tx.query('INSERT INTO key_rotations (key_id, rotation_hash, sealed_secret, grace_until, created_at) VALUES (?, ?, ?, ?, ?)', [
      before.id,
      rotationHash,
      seal(rotationId, secret),
      graceUntil,
      now,
    ]);
  }
  const key = await readKey(tx, before.id);
  const after = { prefix: key.prefix, rotatedAt: key.rotatedAt, previousSecretValidUntil: new Date(graceUntil) };
  await appendAuditEvents(tx, [{ action: 'key.rotate', object: `key:${before.id}`, before: { prefix: before.prefix, rotatedAt: before.rotatedAt }, after }], ctx, now);
  return { key, secret, graceUntil: new Date(graceUntil), replayed: false };
}

async function replayRotation(tx: SqlRunner, key: StoredKey, rotationId: string, rotationHash: string): Promise<RotatedKey | undefined> {
  const [row] = await tx.query<{ sealed_secret: string | null; grace_until: number | string }>(
    'SELECT sealed_secret, grace_until FROM key_rotations WHERE key_id = ? AND rotation_hash = ?',
    [key.id, rotationHash],
  );
  if (!row) return undefined;
  const secret = row.sealed_secret === null ? undefined : unseal(rotationId, row.sealed_secret);
  if (secret === undefined) {
    throw new HerdError('ALREADY_EXISTS', `rotation id was used for key ${key.id} more than 24 hours ago; its secret is no longer kept: rotate again with a new rotation id`, {
      param: 'rotationId',
    });
  }
  return { key, secret, graceUntil: new Date(Number(row.grace_until)), replayed: true };
}

/** Blocking an already blocked key (or unblocking an unblocked one) changes nothing and writes no audit row. */
export async function setBlockedIn(tx: SqlRunner, ref: string, blocked: boolean, ctx: ChangeContext, now: number, rev: number): Promise<StoredKey> {
  const before = await lockLiveKey(tx, ref, blocked ? 'block' : 'unblock');
  if (before.blocked === blocked) return before;
  await tx.query('UPDATE gateway_keys SET blocked = ?, updated_at = ?, revision = ? WHERE id = ?', [blocked ? 1 : 0, now, rev, before.id]);
  const after = await readKey(tx, before.id);
  await appendAuditEvents(tx, [{ action: blocked ? 'key.block' : 'key.unblock', object: `key:${before.id}`, before: { blocked: !blocked }, after: { blocked } }], ctx, now);
  return after;
}

export async function revokeKeyIn(tx: SqlRunner, ref: string, ctx: ChangeContext, now: number, rev: number): Promise<RevokeResult> {
  const found = await findKeyByRef(tx, ref);
  if (found.revokedAt !== undefined) return { key: found, alreadyRevoked: true };
  await tx.query('UPDATE gateway_keys SET revoked_at = ?, updated_at = ?, revision = ? WHERE id = ? AND revoked_at IS NULL', [now, now, rev, found.id]);
  const key = await readKey(tx, found.id);
  await appendAuditEvents(tx, [{ action: 'key.revoke', object: `key:${found.id}`, before: { revokedAt: null }, after: { revokedAt: key.revokedAt } }], ctx, now);
  return { key, alreadyRevoked: false };
}

export async function readKey(db: SqlRunner, id: string): Promise<StoredKey> {
  const [row] = await db.query<KeyRow>(`${KEY_SELECT} WHERE k.id = ?`, [id]);
  if (!row) throw new HerdError('NOT_FOUND', `key ${id} does not exist`);
  return convertKeyRow(row);
}

/** What an audit row shows of a key: everything but the team's policy (its id and name stand for it). */
export function auditView(key: StoredKey): Record<string, unknown> {
  return { ...key, team: key.team ? { id: key.team.id, name: key.team.name } : undefined };
}

/** Resolves the ref, then locks the row (an UPDATE: PostgreSQL's row lock; SQLite's write lock is held already) and reads it again. */
async function lockLiveKey(tx: SqlRunner, ref: string, verb: string): Promise<StoredKey> {
  const found = await findKeyByRef(tx, ref);
  await tx.query('UPDATE gateway_keys SET updated_at = updated_at WHERE id = ?', [found.id]);
  const key = await readKey(tx, found.id);
  if (key.revokedAt !== undefined)
    throw new HerdError('INVALID_ARG', `key ${key.id} ('${key.name}') is revoked and cannot be changed (${verb}): create a new key`, { param: 'key' });
  return key;
}

async function resolveTeam(tx: SqlRunner, valid: ValidKeyFields): Promise<string | null> {
  if (valid.team === undefined) return null;
  return (await findTeamByRef(tx, valid.team)).id;
}

async function checkNameFree(tx: SqlRunner, name: string, teamId: string | null, self: string | undefined): Promise<void> {
  const params: SqlValue[] = [name, teamId ?? '', self ?? ''];
  const [clash] = await tx.query<{ id: string }>("SELECT id FROM gateway_keys WHERE name = ? AND COALESCE(team_id, '') = ? AND revoked_at IS NULL AND id <> ?", params);
  if (clash) {
    const where = teamId === null ? 'among keys without a team' : `in team ${teamId}`;
    throw new HerdError('ALREADY_EXISTS', `a key named ${quoteUntrusted(name)} already exists ${where} (${clash.id}): choose another name, or revoke that key first`, {
      param: 'name',
    });
  }
}

function convertKeyToFields(key: StoredKey): KeyFields {
  return {
    name: key.name,
    team: key.team?.id,
    role: key.role,
    allowedModels: key.allowedModels,
    budgets: key.budgets,
    timezone: key.timezone,
    alertThresholds: key.alertThresholds,
    rpm: key.rpm,
    tpm: key.tpm,
    maxConcurrency: key.maxConcurrency,
    defaultPriority: key.defaultPriority,
    allowedCidrs: key.allowedCidrs,
    tags: key.tags,
    metadata: key.metadata,
    expiresAt: key.expiresAt,
    capMaxTokens: key.capMaxTokens,
  };
}
