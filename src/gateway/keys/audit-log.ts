// The append-only audit log and its hash chain: each row's hash covers its canonical form and the previous
// hash, so an edited, removed or reordered row breaks the chain there; appends take one lock across replicas.
import { hash } from 'node:crypto';
import { HerdError } from '../../core/errors.ts';
import type { SqlDriver, SqlRunner, SqlValue } from '../storage/sql-driver.ts';
import type { AuditEvent, AuditEventInput, AuditListQuery, AuditVerifyResult, ChangeContext, Page } from './key-store.ts';
import { looksLikeKeySecret } from './create-key-secret.ts';
import { maskKey } from './mask-key.ts';
import { decodeCursor, encodeCursor, pageLimit } from './page-cursor.ts';

export const GENESIS_HASH = '0'.repeat(64);
/** pg_advisory_xact_lock id of the chain head (any constant every Herd agrees on). */
const AUDIT_LOCK = 0x48657241; // 'HerA'
const VERIFY_BATCH = 500;

type Int = number | string;
interface AuditRow {
  seq: Int;
  at: Int;
  actor_id: string;
  actor_name: string;
  action: string;
  object: string;
  before_json: string | null;
  after_json: string | null;
  request_id: string | null;
  source_ip: string | null;
  count: Int;
  prev_hash: string;
  hash: string;
}

const COLUMNS = 'seq, at, actor_id, actor_name, action, object, before_json, after_json, request_id, source_ip, count, prev_hash, hash';

/**
 * The canonical form: a JSON array of a version tag and every column but `hash`, in table order, integers
 * as numbers, before/after as the exact JSON text stored, absent values as null.
 */
export function canonicalAuditRow(row: Omit<AuditRow, 'hash'>): string {
  return JSON.stringify([
    'herd-audit-v1',
    Number(row.seq),
    Number(row.at),
    row.actor_id,
    row.actor_name,
    row.action,
    row.object,
    row.before_json,
    row.after_json,
    row.request_id,
    row.source_ip,
    Number(row.count),
    row.prev_hash,
  ]);
}

const hashRow = (row: Omit<AuditRow, 'hash'>) => hash('sha256', canonicalAuditRow(row), 'hex');

/** Appends inside the caller's transaction, so a change and its audit row commit together or not at all. */
export async function appendAuditEvents(tx: SqlRunner, events: readonly AuditEventInput[], ctx: ChangeContext, atMs: number): Promise<void> {
  if (events.length === 0) return;
  // SQLite: BEGIN IMMEDIATE already holds the one write lock. PostgreSQL: this lock orders every appender.
  await tx.lockExclusive(AUDIT_LOCK);
  const [head] = await tx.query<{ seq: Int; hash: string }>('SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1');
  let seq = head ? Number(head.seq) : 0;
  let prevHash = head ? head.hash : GENESIS_HASH;
  for (const event of events) {
    const row: Omit<AuditRow, 'hash'> = {
      seq: ++seq,
      at: atMs,
      actor_id: ctx.actor.id,
      actor_name: ctx.actor.name,
      action: event.action,
      object: event.object,
      before_json: event.before === undefined ? null : JSON.stringify(redact(event.before)),
      after_json: event.after === undefined ? null : JSON.stringify(redact(event.after)),
      request_id: ctx.requestId ?? null,
      source_ip: ctx.sourceIp ?? null,
      count: event.count ?? 1,
      prev_hash: prevHash,
    };
    prevHash = hashRow(row);
    const values: SqlValue[] = [...Object.values(row).map((v) => v as SqlValue), prevHash];
    await tx.query(`INSERT INTO audit_events (${COLUMNS}) VALUES (${values.map(() => '?').join(', ')})`, values);
  }
}

const SECRET_FIELDS = /^(secret|secrets|hash|keyhash|key_hash|password|authorization|apikey|api_key)$/i;

/** No secret or hash ever lands in a row, whatever a caller passes: such fields become '[redacted]', key-shaped strings are masked. */
export function redact(value: unknown): unknown {
  if (typeof value === 'string') return looksLikeKeySecret(value) ? maskKey(value) : value;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(redact);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, SECRET_FIELDS.test(k) ? '[redacted]' : redact(v)]));
  }
  return value;
}

/** Newest first; the cursor is the last seq of the page before. */
export async function listAuditEvents(db: SqlDriver, query: AuditListQuery): Promise<Page<AuditEvent>> {
  const limit = pageLimit(query.limit);
  const where: string[] = [];
  const params: SqlValue[] = [];
  const add = (clause: string, value: SqlValue | undefined) => {
    if (value === undefined) return;
    where.push(clause);
    params.push(value);
  };
  add('action = ?', query.action);
  add('object = ?', query.object);
  add('actor_id = ?', query.actorId);
  add('at >= ?', query.sinceMs);
  add('at < ?', query.untilMs);
  if (query.cursor !== undefined) add('seq < ?', decodeCursor(query.cursor, 'audit')[0] as number);
  const rows = await db.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_events ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`, [
    ...params,
    limit + 1,
  ]);
  const items = rows.slice(0, limit).map(convertAuditRow);
  const last = items.at(-1);
  return { items, next: rows.length > limit && last ? encodeCursor('audit', [last.seq]) : undefined };
}

/** Walks the chain from seq 1 in batches; the first row whose seq, link or hash is wrong is named. */
export async function verifyAuditChain(db: SqlDriver): Promise<AuditVerifyResult> {
  let expected = 1;
  let prevHash = GENESIS_HASH;
  for (;;) {
    const rows = await db.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_events WHERE seq >= ? ORDER BY seq LIMIT ?`, [expected, VERIFY_BATCH]);
    for (const row of rows) {
      const seq = Number(row.seq);
      const rowsSoFar = expected - 1;
      if (seq !== expected) return { ok: false, rows: rowsSoFar, brokenSeq: expected, reason: `row ${expected} is missing (the next row is ${seq}): rows were deleted` };
      if (row.prev_hash !== prevHash)
        return { ok: false, rows: rowsSoFar, brokenSeq: seq, reason: `row ${seq}'s prev_hash does not match row ${seq - 1}'s hash: the chain was cut or rewritten here` };
      if (hashRow(row) !== row.hash)
        return { ok: false, rows: rowsSoFar, brokenSeq: seq, reason: `row ${seq}'s hash does not match its contents: the row was edited after it was written` };
      prevHash = row.hash;
      expected++;
    }
    if (rows.length < VERIFY_BATCH) return { ok: true, rows: expected - 1 };
  }
}

function convertAuditRow(row: AuditRow): AuditEvent {
  return {
    seq: Number(row.seq),
    at: new Date(Number(row.at)),
    actorId: row.actor_id,
    actorName: row.actor_name,
    action: row.action,
    object: row.object,
    before: parseJson(row.before_json),
    after: parseJson(row.after_json),
    requestId: row.request_id ?? undefined,
    sourceIp: row.source_ip ?? undefined,
    count: Number(row.count),
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

function parseJson(text: string | null): unknown {
  if (text === null) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new HerdError('INTERNAL', 'an audit row holds unreadable JSON: run `herd audit verify`');
  }
}
