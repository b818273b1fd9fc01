// Idempotency-Key handling for the admin API: one INSERT … ON CONFLICT claims (actor, key) across replicas; a retry
// with the same fingerprint gets the stored (sealed) answer, anything else is refused.
import { hash } from 'node:crypto';
import { HerdError } from '../../core/errors.ts';
import type { SqlDriver } from '../storage/sql-driver.ts';
import type { IdempotentAnswer } from './key-store.ts';
import { seal, unseal } from './seal-replay.ts';

/** A row older than this may be claimed again: the key is free for a new request. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/** A 'running' row this old was left by a process that died mid-request: it may be claimed again. */
const ABANDONED_MS = 5 * 60_000;

interface IdempotencyRow {
  fingerprint: string;
  state: string;
  status: number | string | null;
  body: string | null;
}

export async function runIdempotent(
  db: SqlDriver,
  actorId: string,
  idempotencyKey: string,
  fingerprint: string,
  run: () => Promise<IdempotentAnswer>,
  now: () => number,
): Promise<IdempotentAnswer & { replayed: boolean }> {
  if (idempotencyKey === '' || idempotencyKey.length > 255)
    throw new HerdError('INVALID_ARG', 'Idempotency-Key must be 1–255 characters (a UUID is best)', { param: 'Idempotency-Key' });
  const keyHash = hash('sha256', idempotencyKey, 'hex');
  const passphrase = `${actorId}\n${idempotencyKey}`;
  const at = now();
  const claimed = await db.query(
    `INSERT INTO admin_idempotency (actor_id, key_hash, fingerprint, state, status, body, created_at) VALUES (?, ?, ?, 'running', NULL, NULL, ?)
     ON CONFLICT (actor_id, key_hash) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'running', status = NULL, body = NULL, created_at = excluded.created_at
     WHERE admin_idempotency.created_at < ? OR (admin_idempotency.state = 'running' AND admin_idempotency.created_at < ?)
     RETURNING actor_id`,
    [actorId, keyHash, fingerprint, at, at - IDEMPOTENCY_TTL_MS, at - ABANDONED_MS],
  );
  if (claimed.length === 0) return replay(db, actorId, keyHash, fingerprint, passphrase);
  let answer: IdempotentAnswer;
  try {
    answer = await run();
  } catch (err) {
    // A failure is not an answer to keep: the client may retry with the same key once it fixed the cause.
    await db.query('DELETE FROM admin_idempotency WHERE actor_id = ? AND key_hash = ? AND created_at = ?', [actorId, keyHash, at]).catch(() => undefined);
    throw err;
  }
  await db.query("UPDATE admin_idempotency SET state = 'done', status = ?, body = ? WHERE actor_id = ? AND key_hash = ? AND created_at = ?", [
    answer.status,
    seal(passphrase, answer.body),
    actorId,
    keyHash,
    at,
  ]);
  return { ...answer, replayed: false };
}

async function replay(db: SqlDriver, actorId: string, keyHash: string, fingerprint: string, passphrase: string): Promise<IdempotentAnswer & { replayed: boolean }> {
  const [row] = await db.query<IdempotencyRow>('SELECT fingerprint, state, status, body FROM admin_idempotency WHERE actor_id = ? AND key_hash = ?', [actorId, keyHash]);
  if (!row) throw new HerdError('UNAVAILABLE', 'the Idempotency-Key row vanished while it was being read: retry the request');
  if (row.fingerprint !== fingerprint) {
    throw new HerdError('ALREADY_EXISTS', 'Idempotency-Key was used with a different request in the last 24 hours: use a new key for a new request', { param: 'Idempotency-Key' });
  }
  if (row.state !== 'done' || row.body === null) {
    throw new HerdError('ALREADY_EXISTS', 'the request with this Idempotency-Key is still being processed: retry in a few seconds', {
      param: 'Idempotency-Key',
      retryAfterSeconds: 2,
    });
  }
  const body = unseal(passphrase, row.body);
  if (body === undefined) throw new HerdError('INTERNAL', 'the answer stored under this Idempotency-Key cannot be opened: use a new key');
  return { status: Number(row.status), body, replayed: true };
}
