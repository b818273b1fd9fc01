// Rows of the batch tables to and from the store's types: one place for column names, and for PostgreSQL's BIGINT
// (read back as text) and NULLs becoming numbers and undefined.
import type { SqlValue } from '../storage/sql-driver.ts';
import type { Batch, BatchChanges, BatchFile, BatchLine, LineChanges, LineResult, UpstreamBatchChanges, UpstreamBatchRow } from './batch-store.ts';

type Row = Record<string, unknown>;

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));
const optNum = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : num(v));
const optText = (v: unknown): string | undefined => (v === null || v === undefined ? undefined : String(v));
const orNull = (v: string | number | undefined): SqlValue => (v === undefined ? null : v);

export const FILE_COLUMNS = ['id', 'key_id', 'purpose', 'filename', 'bytes', 'lines', 'created_at', 'expires_at', 'deleted_at', 'storage_ref'] as const;

export function fileValues(f: BatchFile): SqlValue[] {
  return [f.id, f.keyId, f.purpose, f.filename, f.bytes, f.lines, f.createdAt, orNull(f.expiresAt), orNull(f.deletedAt), f.storageRef];
}

export function toBatchFile(r: Row): BatchFile {
  return {
    id: String(r.id),
    keyId: String(r.key_id),
    purpose: r.purpose === 'batch_output' ? 'batch_output' : 'batch',
    filename: String(r.filename),
    bytes: num(r.bytes),
    lines: num(r.lines),
    createdAt: num(r.created_at),
    expiresAt: optNum(r.expires_at),
    deletedAt: optNum(r.deleted_at),
    storageRef: String(r.storage_ref),
  };
}

/** Batch fields and their columns; JSON fields are written as text. */
const BATCH_FIELDS: readonly [keyof Batch, string][] = [
  ['id', 'id'],
  ['dialect', 'dialect'],
  ['keyId', 'key_id'],
  ['teamId', 'team_id'],
  ['endpoint', 'endpoint'],
  ['inputFileId', 'input_file_id'],
  ['status', 'status'],
  ['completionWindowMs', 'completion_window_ms'],
  ['createdAt', 'created_at'],
  ['expiresAt', 'expires_at'],
  ['inProgressAt', 'in_progress_at'],
  ['finalizingAt', 'finalizing_at'],
  ['completedAt', 'completed_at'],
  ['cancellingAt', 'cancelling_at'],
  ['cancelledAt', 'cancelled_at'],
  ['failedAt', 'failed_at'],
  ['expiredAt', 'expired_at'],
  ['metadata', 'metadata_json'],
  ['total', 'total'],
  ['completed', 'completed'],
  ['failed', 'failed'],
  ['outputFileId', 'output_file_id'],
  ['errorFileId', 'error_file_id'],
  ['reservedMicros', 'reserved_micros'],
  ['currency', 'currency'],
  ['errors', 'errors_json'],
];
const JSON_FIELDS = new Set<keyof Batch>(['metadata', 'errors']);
const NUMBER_COLUMNS = new Set(['completion_window_ms', 'created_at', 'expires_at', 'total', 'completed', 'failed', 'reserved_micros']);

export const BATCH_COLUMNS = BATCH_FIELDS.map(([, column]) => column);

function batchValue(field: keyof Batch, value: unknown): SqlValue {
  if (value === undefined || value === null) return null;
  if (JSON_FIELDS.has(field)) return JSON.stringify(value);
  return typeof value === 'number' ? value : String(value);
}

export function batchValues(b: Batch): SqlValue[] {
  return BATCH_FIELDS.map(([field]) => batchValue(field, b[field]));
}

/** `col = ?` pairs and their values for the fields `changes` sets. */
export function batchAssignments(changes: BatchChanges): { sql: string; values: SqlValue[] } {
  const set = BATCH_FIELDS.filter(([field]) => field in changes);
  return { sql: set.map(([, column]) => `${column} = ?`).join(', '), values: set.map(([field]) => batchValue(field, (changes as Partial<Batch>)[field])) };
}

export function toBatch(r: Row): Batch {
  const out: Record<string, unknown> = {};
  for (const [field, column] of BATCH_FIELDS) {
    const value = r[column];
    if (JSON_FIELDS.has(field)) out[field] = value === null || value === undefined ? undefined : JSON.parse(String(value));
    else if (NUMBER_COLUMNS.has(column)) out[field] = num(value);
    else if (column.endsWith('_at')) out[field] = optNum(value);
    else out[field] = optText(value);
  }
  return out as unknown as Batch;
}

export const LINE_COLUMNS = [
  'batch_id',
  'line_no',
  'custom_id',
  'request_id',
  'body_offset',
  'body_length',
  'model',
  'deployment',
  'state',
  'upstream_batch_id',
  'lease_owner',
  'lease_until',
  'attempts',
  'result_ref',
  'status_code',
  'queued_at',
  'result_json',
] as const;

export function lineValues(l: BatchLine): SqlValue[] {
  return [
    l.batchId,
    l.lineNo,
    l.customId,
    l.requestId,
    l.bodyOffset,
    l.bodyLength,
    orNull(l.model),
    orNull(l.deployment),
    l.state,
    orNull(l.upstreamBatchId),
    orNull(l.leaseOwner),
    orNull(l.leaseUntil),
    l.attempts,
    orNull(l.resultRef),
    orNull(l.statusCode),
    orNull(l.queuedAt),
    resultValue(l.result),
  ];
}

export function toBatchLine(r: Row): BatchLine {
  return {
    batchId: String(r.batch_id),
    lineNo: num(r.line_no),
    customId: String(r.custom_id),
    requestId: String(r.request_id),
    bodyOffset: num(r.body_offset),
    bodyLength: num(r.body_length),
    model: optText(r.model),
    deployment: optText(r.deployment),
    state: String(r.state) as BatchLine['state'],
    upstreamBatchId: optText(r.upstream_batch_id),
    leaseOwner: optText(r.lease_owner),
    leaseUntil: optNum(r.lease_until),
    attempts: num(r.attempts),
    resultRef: optText(r.result_ref),
    statusCode: optNum(r.status_code),
    queuedAt: optNum(r.queued_at),
    result: r.result_json === null || r.result_json === undefined ? undefined : (JSON.parse(String(r.result_json)) as LineResult),
  };
}

const LINE_FIELDS: readonly [keyof LineChanges, string][] = [
  ['model', 'model'],
  ['deployment', 'deployment'],
  ['state', 'state'],
  ['upstreamBatchId', 'upstream_batch_id'],
  ['leaseOwner', 'lease_owner'],
  ['leaseUntil', 'lease_until'],
  ['attempts', 'attempts'],
  ['resultRef', 'result_ref'],
  ['statusCode', 'status_code'],
  ['queuedAt', 'queued_at'],
];

const resultValue = (result: LineResult | undefined): SqlValue => (result === undefined ? null : JSON.stringify(result));

export function lineAssignments(changes: LineChanges): { sql: string; values: SqlValue[] } {
  const set = LINE_FIELDS.filter(([field]) => field in changes);
  const sql = set.map(([, column]) => `${column} = ?`);
  const values = set.map(([field]) => orNull(changes[field] as string | number | undefined));
  if ('result' in changes) {
    sql.push('result_json = ?');
    values.push(resultValue(changes.result));
  }
  return { sql: sql.join(', '), values };
}

const UPSTREAM_FIELDS: readonly [keyof UpstreamBatchRow, string][] = [
  ['id', 'id'],
  ['deployment', 'deployment'],
  ['provider', 'provider'],
  ['endpoint', 'endpoint'],
  ['providerBatchId', 'provider_batch_id'],
  ['state', 'state'],
  ['lines', 'lines'],
  ['createdAt', 'created_at'],
  ['submittedAt', 'submitted_at'],
  ['nextPollAt', 'next_poll_at'],
  ['pollAttempts', 'poll_attempts'],
  ['leaseOwner', 'lease_owner'],
  ['leaseUntil', 'lease_until'],
  ['inputFileRef', 'input_file_ref'],
  ['outputFileRef', 'output_file_ref'],
];
const UPSTREAM_NUMBERS = new Set(['lines', 'created_at', 'poll_attempts']);
const UPSTREAM_OPTIONAL_NUMBERS = new Set(['submitted_at', 'next_poll_at', 'lease_until']);

export const UPSTREAM_COLUMNS = UPSTREAM_FIELDS.map(([, column]) => column);

export function upstreamValues(u: UpstreamBatchRow): SqlValue[] {
  return UPSTREAM_FIELDS.map(([field]) => orNull(u[field]));
}

export function upstreamAssignments(changes: UpstreamBatchChanges): { sql: string; values: SqlValue[] } {
  const set = UPSTREAM_FIELDS.filter(([field]) => field in changes);
  return {
    sql: set.map(([, column]) => `${column} = ?`).join(', '),
    values: set.map(([field]) => orNull((changes as Partial<UpstreamBatchRow>)[field])),
  };
}

export function toUpstreamBatch(r: Row): UpstreamBatchRow {
  const out: Record<string, unknown> = {};
  for (const [field, column] of UPSTREAM_FIELDS) {
    const value = r[column];
    if (UPSTREAM_NUMBERS.has(column)) out[field] = num(value);
    else if (UPSTREAM_OPTIONAL_NUMBERS.has(column)) out[field] = optNum(value);
    else out[field] = optText(value);
  }
  return out as unknown as UpstreamBatchRow;
}
