// The BatchStore, written once over SqlDriver for SQLite and PostgreSQL (like keys/sql-key-store.ts): files,
// batches and lines in the ledger's database; lines leased with an expiry so another replica takes over a dead one's.
import { HerdError } from '../../core/errors.ts';
import type { SqlDriver, SqlValue } from '../storage/sql-driver.ts';
import {
  BATCH_COLUMNS,
  batchAssignments,
  batchValues,
  FILE_COLUMNS,
  fileValues,
  LINE_COLUMNS,
  lineAssignments,
  lineValues,
  toBatch,
  toBatchFile,
  toBatchLine,
  toUpstreamBatch,
  UPSTREAM_COLUMNS,
  upstreamAssignments,
  upstreamValues,
} from './batch-rows.ts';
import { SqlFileBlobs } from './sql-file-blobs.ts';
import type * as S from './batch-store.ts';

/** Lines per INSERT: 15 columns each, well under SQLite's 32 766 parameters and PostgreSQL's 65 535. */
const LINES_PER_STATEMENT = 500;

type Row = Record<string, unknown>;

const list = (n: number) => Array.from({ length: n }, () => '?').join(', ');
const placeholders = (n: number) => `(${list(n)})`;
/** Lines queued for an upstream batch and not packed into one yet (the partial index batch_lines_queued). */
const QUEUED = "state = 'queued_upstream' AND upstream_batch_id IS NULL";
const LINE_STATES: ReadonlySet<string> = new Set<S.BatchLineState>(['pending', 'queued_upstream', 'running', 'succeeded', 'errored', 'canceled', 'expired']);

/** A line state as an SQL literal (checked against the closed set: it is written into the statement). */
function stateLiteral(state: S.BatchLineState): string {
  if (!LINE_STATES.has(state)) throw new HerdError('INTERNAL', `not a batch line state: ${String(state)}`);
  return `'${state}'`;
}

export class SqlBatchStore implements S.BatchStore {
  readonly kind: 'sqlite' | 'postgres';
  readonly blobs: S.FileBlobStore;

  /** The driver is the store's from here on (close() closes it). */
  constructor(private readonly db: SqlDriver) {
    this.kind = db.kind;
    this.blobs = new SqlFileBlobs(db);
  }

  async insertFile(file: S.BatchFile): Promise<void> {
    await this.db.query(`INSERT INTO batch_files (${FILE_COLUMNS.join(', ')}) VALUES ${placeholders(FILE_COLUMNS.length)}`, fileValues(file));
  }

  async getFile(id: string): Promise<S.BatchFile | undefined> {
    const rows = await this.db.query<Row>(`SELECT ${FILE_COLUMNS.join(', ')} FROM batch_files WHERE id = ?`, [id]);
    return rows[0] === undefined ? undefined : toBatchFile(rows[0]);
  }

  async listFiles(query: S.PageQuery & { purpose: S.BatchFilePurpose | undefined; now: number }): Promise<S.Page<S.BatchFile>> {
    const where = ['deleted_at IS NULL', '(expires_at IS NULL OR expires_at > ?)'];
    const params: SqlValue[] = [query.now];
    if (query.purpose !== undefined) {
      where.push('purpose = ?');
      params.push(query.purpose);
    }
    const rows = await this.page('batch_files', FILE_COLUMNS, where, params, query);
    return { items: rows.items.map(toBatchFile), hasMore: rows.hasMore };
  }

  async markFileDeleted(id: string, at: number): Promise<boolean> {
    const rows = await this.db.query<Row>('UPDATE batch_files SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL RETURNING id', [at, id]);
    return rows.length > 0;
  }

  async insertBatch(batch: S.Batch): Promise<void> {
    await this.db.query(`INSERT INTO batches (${BATCH_COLUMNS.join(', ')}) VALUES ${placeholders(BATCH_COLUMNS.length)}`, batchValues(batch));
  }

  async getBatch(id: string): Promise<S.Batch | undefined> {
    const rows = await this.db.query<Row>(`SELECT ${BATCH_COLUMNS.join(', ')} FROM batches WHERE id = ?`, [id]);
    return rows[0] === undefined ? undefined : toBatch(rows[0]);
  }

  async listBatches(query: S.PageQuery & { dialect: S.BatchDialect }): Promise<S.Page<S.Batch>> {
    const rows = await this.page('batches', BATCH_COLUMNS, ['dialect = ?'], [query.dialect], query);
    return { items: rows.items.map(toBatch), hasMore: rows.hasMore };
  }

  async updateBatch(id: string, changes: S.BatchChanges, fromStatus?: readonly S.BatchStatus[]): Promise<boolean> {
    const set = batchAssignments(changes);
    if (set.sql === '') return (await this.getBatch(id)) !== undefined;
    const guard = fromStatus === undefined ? '' : ` AND status IN (${fromStatus.map(() => '?').join(', ')})`;
    const rows = await this.db.query<Row>(`UPDATE batches SET ${set.sql} WHERE id = ?${guard} RETURNING id`, [...set.values, id, ...(fromStatus ?? [])]);
    return rows.length > 0;
  }

  async insertLines(lines: readonly S.BatchLine[]): Promise<void> {
    if (lines.length === 0) return;
    await this.db.transaction(async (tx) => {
      for (let start = 0; start < lines.length; start += LINES_PER_STATEMENT) {
        const chunk = lines.slice(start, start + LINES_PER_STATEMENT);
        const values = chunk.map(() => placeholders(LINE_COLUMNS.length)).join(', ');
        await tx.query(`INSERT INTO batch_lines (${LINE_COLUMNS.join(', ')}) VALUES ${values}`, chunk.flatMap(lineValues));
      }
    });
  }

  async listLines(batchId: string, fromLine: number, limit: number): Promise<S.BatchLine[]> {
    const rows = await this.db.query<Row>(`SELECT ${LINE_COLUMNS.join(', ')} FROM batch_lines WHERE batch_id = ? AND line_no >= ? ORDER BY line_no LIMIT ?`, [
      batchId,
      fromLine,
      limit,
    ]);
    return rows.map(toBatchLine);
  }

  async claimLines(claim: S.ClaimLines): Promise<S.BatchLine[]> {
    if (claim.states.length === 0 || claim.limit <= 0) return [];
    // Literals, not parameters: only then may the planner use the partial index batch_lines_open.
    const states = claim.states.map(stateLiteral).join(', ');
    const batch = claim.batchId === undefined ? '' : ' AND batch_id = ?';
    const pick = `SELECT batch_id, line_no FROM batch_lines WHERE state IN (${states}) AND (lease_until IS NULL OR lease_until < ?)${batch} ORDER BY batch_id, line_no LIMIT ?`;
    // PostgreSQL: rows another replica is claiming right now are skipped, not waited for; SQLite's write lock already serializes claims.
    const locked = this.kind === 'postgres' ? `${pick} FOR UPDATE SKIP LOCKED` : pick;
    const params: SqlValue[] = [claim.owner, claim.now + claim.leaseMs, claim.now, ...(claim.batchId === undefined ? [] : [claim.batchId]), claim.limit];
    const rows = await this.db.transaction((tx) =>
      tx.query<Row>(
        `UPDATE batch_lines SET lease_owner = ?, lease_until = ?, attempts = attempts + 1 WHERE (batch_id, line_no) IN (${locked}) RETURNING ${LINE_COLUMNS.join(', ')}`,
        params,
      ),
    );
    return rows.map(toBatchLine).sort((a, b) => (a.batchId === b.batchId ? a.lineNo - b.lineNo : a.batchId < b.batchId ? -1 : 1));
  }

  async updateLine(batchId: string, lineNo: number, changes: S.LineChanges, owner?: string): Promise<boolean> {
    const set = lineAssignments(changes);
    if (set.sql === '') return true;
    const guard = owner === undefined ? '' : ' AND lease_owner = ?';
    const rows = await this.db.query<Row>(`UPDATE batch_lines SET ${set.sql} WHERE batch_id = ? AND line_no = ?${guard} RETURNING line_no`, [
      ...set.values,
      batchId,
      lineNo,
      ...(owner === undefined ? [] : [owner]),
    ]);
    return rows.length > 0;
  }

  async countLines(batchId: string): Promise<Partial<Record<S.BatchLineState, number>>> {
    const rows = await this.db.query<Row>('SELECT state, COUNT(*) AS n FROM batch_lines WHERE batch_id = ? GROUP BY state', [batchId]);
    return Object.fromEntries(rows.map((r) => [String(r.state), Number(r.n)]));
  }

  async deleteBatch(id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await tx.query('DELETE FROM batch_lines WHERE batch_id = ?', [id]);
      return (await tx.query<Row>('DELETE FROM batches WHERE id = ? RETURNING id', [id])).length > 0;
    });
  }

  async finishLines(batchId: string, from: readonly S.BatchLineState[], to: S.BatchLineState, result: S.LineResult, options: { unsentOnly?: boolean } = {}): Promise<number> {
    if (from.length === 0) return 0;
    const unsent = options.unsentOnly === true ? ' AND upstream_batch_id IS NULL' : '';
    const rows = await this.db.query<Row>(
      `UPDATE batch_lines SET state = ?, result_json = ?, lease_owner = NULL, lease_until = NULL WHERE batch_id = ? AND state IN (${list(from.length)})${unsent} RETURNING line_no`,
      [to, JSON.stringify(result), batchId, ...from],
    );
    return rows.length;
  }

  async returnUnsentLines(batchId: string): Promise<number> {
    const rows = await this.db.query<Row>(
      "UPDATE batch_lines SET state = 'pending', deployment = NULL, queued_at = NULL, lease_owner = NULL, lease_until = NULL WHERE batch_id = ? AND state = 'queued_upstream' AND upstream_batch_id IS NULL RETURNING line_no",
      [batchId],
    );
    return rows.length;
  }

  async listBatchesByStatus(statuses: readonly S.BatchStatus[], limit: number): Promise<S.Batch[]> {
    if (statuses.length === 0) return [];
    const rows = await this.db.query<Row>(`SELECT ${BATCH_COLUMNS.join(', ')} FROM batches WHERE status IN (${list(statuses.length)}) ORDER BY created_at, id LIMIT ?`, [
      ...statuses,
      limit,
    ]);
    return rows.map(toBatch);
  }

  async listQueuedDeployments(): Promise<S.QueuedDeployment[]> {
    const rows = await this.db.query<Row>(`SELECT deployment, COUNT(*) AS n, MIN(queued_at) AS oldest FROM batch_lines WHERE ${QUEUED} GROUP BY deployment ORDER BY oldest`);
    return rows.map((r) => ({ deployment: String(r.deployment), lines: Number(r.n), oldestQueuedAt: Number(r.oldest) }));
  }

  async listQueuedLines(deployment: string, limit: number): Promise<S.BatchLine[]> {
    const rows = await this.db.query<Row>(`SELECT ${LINE_COLUMNS.join(', ')} FROM batch_lines WHERE ${QUEUED} AND deployment = ? ORDER BY queued_at, batch_id, line_no LIMIT ?`, [
      deployment,
      limit,
    ]);
    return rows.map(toBatchLine);
  }

  async insertUpstreamBatch(row: S.UpstreamBatchRow, lines: readonly { batchId: string; lineNo: number }[]): Promise<number> {
    return this.db.transaction(async (tx) => {
      await tx.query(`INSERT INTO upstream_batches (${UPSTREAM_COLUMNS.join(', ')}) VALUES ${placeholders(UPSTREAM_COLUMNS.length)}`, upstreamValues(row));
      let taken = 0;
      for (let start = 0; start < lines.length; start += LINES_PER_STATEMENT) {
        const chunk = lines.slice(start, start + LINES_PER_STATEMENT);
        const pairs = chunk.map(() => '(?, CAST(? AS BIGINT))').join(', ');
        const updated = await tx.query<Row>(`UPDATE batch_lines SET upstream_batch_id = ? WHERE ${QUEUED} AND (batch_id, line_no) IN (VALUES ${pairs}) RETURNING line_no`, [
          row.id,
          ...chunk.flatMap((l) => [l.batchId, l.lineNo]),
        ]);
        taken += updated.length;
      }
      await tx.query('UPDATE upstream_batches SET lines = ? WHERE id = ?', [taken, row.id]);
      return taken;
    });
  }

  async getUpstreamBatch(id: string): Promise<S.UpstreamBatchRow | undefined> {
    const rows = await this.db.query<Row>(`SELECT ${UPSTREAM_COLUMNS.join(', ')} FROM upstream_batches WHERE id = ?`, [id]);
    return rows[0] === undefined ? undefined : toUpstreamBatch(rows[0]);
  }

  async claimUpstreamBatches(claim: S.ClaimUpstreamBatches): Promise<S.UpstreamBatchRow[]> {
    if (claim.states.length === 0 || claim.limit <= 0) return [];
    const pick = `SELECT id FROM upstream_batches WHERE state IN (${list(claim.states.length)}) AND (next_poll_at IS NULL OR next_poll_at <= ?) AND (lease_until IS NULL OR lease_until < ?) ORDER BY created_at, id LIMIT ?`;
    const locked = this.kind === 'postgres' ? `${pick} FOR UPDATE SKIP LOCKED` : pick;
    const rows = await this.db.transaction((tx) =>
      tx.query<Row>(`UPDATE upstream_batches SET lease_owner = ?, lease_until = ? WHERE id IN (${locked}) RETURNING ${UPSTREAM_COLUMNS.join(', ')}`, [
        claim.owner,
        claim.now + claim.leaseMs,
        ...claim.states,
        claim.now,
        claim.now,
        claim.limit,
      ]),
    );
    return rows.map(toUpstreamBatch).sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }

  async updateUpstreamBatch(id: string, changes: S.UpstreamBatchChanges, owner?: string): Promise<boolean> {
    const set = upstreamAssignments(changes);
    if (set.sql === '') return (await this.getUpstreamBatch(id)) !== undefined;
    const guard = owner === undefined ? '' : ' AND lease_owner = ?';
    const rows = await this.db.query<Row>(`UPDATE upstream_batches SET ${set.sql} WHERE id = ?${guard} RETURNING id`, [...set.values, id, ...(owner === undefined ? [] : [owner])]);
    return rows.length > 0;
  }

  async listUpstreamLines(upstreamBatchId: string, afterRequestId: string | undefined, limit: number): Promise<S.BatchLine[]> {
    const after = afterRequestId === undefined ? '' : ' AND request_id > ?';
    const rows = await this.db.query<Row>(`SELECT ${LINE_COLUMNS.join(', ')} FROM batch_lines WHERE upstream_batch_id = ?${after} ORDER BY request_id LIMIT ?`, [
      upstreamBatchId,
      ...(afterRequestId === undefined ? [] : [afterRequestId]),
      limit,
    ]);
    return rows.map(toBatchLine);
  }

  async getLineByRequestId(requestId: string): Promise<S.BatchLine | undefined> {
    const rows = await this.db.query<Row>(`SELECT ${LINE_COLUMNS.join(', ')} FROM batch_lines WHERE request_id = ?`, [requestId]);
    return rows[0] === undefined ? undefined : toBatchLine(rows[0]);
  }

  async requeueUpstreamLines(upstreamBatchId: string, maxAttempts: number, failed: S.LineResult): Promise<{ requeued: number; errored: number }> {
    const mine = "upstream_batch_id = ? AND state = 'queued_upstream'";
    return this.db.transaction(async (tx) => {
      const requeued = await tx.query<Row>(
        `UPDATE batch_lines SET state = 'pending', deployment = NULL, upstream_batch_id = NULL, queued_at = NULL, lease_owner = NULL, lease_until = NULL WHERE ${mine} AND attempts < ? RETURNING line_no`,
        [upstreamBatchId, maxAttempts],
      );
      const status = failed.outcome === 'errored' || failed.outcome === 'succeeded' ? failed.statusCode : null;
      const errored = await tx.query<Row>(
        `UPDATE batch_lines SET state = 'errored', result_json = ?, status_code = ?, lease_owner = NULL, lease_until = NULL WHERE ${mine} RETURNING line_no`,
        [JSON.stringify(failed), status, upstreamBatchId],
      );
      return { requeued: requeued.length, errored: errored.length };
    });
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  /** One page of `table` by (created_at, id), after the cursor row when there is one; a cursor that is not a row gives an empty page. */
  private async page(table: string, columns: readonly string[], where: string[], params: SqlValue[], query: S.PageQuery): Promise<{ items: Row[]; hasMore: boolean }> {
    const conditions = [...where];
    const values = [...params];
    if (query.keyId !== undefined) {
      conditions.push('key_id = ?');
      values.push(query.keyId);
    }
    if (query.after !== undefined) {
      const cursor = (await this.db.query<Row>(`SELECT created_at FROM ${table} WHERE id = ?`, [query.after]))[0];
      if (cursor === undefined) return { items: [], hasMore: false };
      const at = Number(cursor.created_at);
      const cmp = query.order === 'asc' ? '>' : '<';
      conditions.push(`(created_at ${cmp} ? OR (created_at = ? AND id ${cmp} ?))`);
      values.push(at, at, query.after);
    }
    const direction = query.order === 'asc' ? 'ASC' : 'DESC';
    const rows = await this.db.query<Row>(
      `SELECT ${columns.join(', ')} FROM ${table} WHERE ${conditions.join(' AND ')} ORDER BY created_at ${direction}, id ${direction} LIMIT ?`,
      [...values, query.limit + 1],
    );
    return { items: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }
}
