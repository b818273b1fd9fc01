// The BatchStore, written once over SqlDriver for SQLite and PostgreSQL (like keys/sql-key-store.ts): files,
// batches and lines in the ledger's database; lines leased with an expiry so another replica takes over a dead one's.
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
} from './batch-rows.ts';
import type * as S from './batch-store.ts';

/** Lines per INSERT: 15 columns each, well under SQLite's 32 766 parameters and PostgreSQL's 65 535. */
const LINES_PER_STATEMENT = 500;

type Row = Record<string, unknown>;

const placeholders = (n: number) => `(${Array.from({ length: n }, () => '?').join(', ')})`;

export class SqlBatchStore implements S.BatchStore {
  readonly kind: 'sqlite' | 'postgres';

  /** The driver is the store's from here on (close() closes it). */
  constructor(private readonly db: SqlDriver) {
    this.kind = db.kind;
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
    const states = claim.states.map(() => '?').join(', ');
    const batch = claim.batchId === undefined ? '' : ' AND batch_id = ?';
    const pick = `SELECT batch_id, line_no FROM batch_lines WHERE state IN (${states}) AND (lease_until IS NULL OR lease_until < ?)${batch} ORDER BY batch_id, line_no LIMIT ?`;
    // PostgreSQL: rows another replica is claiming right now are skipped, not waited for; SQLite's write lock already serializes claims.
    const locked = this.kind === 'postgres' ? `${pick} FOR UPDATE SKIP LOCKED` : pick;
    const params: SqlValue[] = [claim.owner, claim.now + claim.leaseMs, ...claim.states, claim.now, ...(claim.batchId === undefined ? [] : [claim.batchId]), claim.limit];
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

  // The upstream-batch and worker queries land with the worker (issue #33, in progress).
  deleteBatch(): Promise<boolean> {
    return notYet();
  }
  finishLines(): Promise<number> {
    return notYet();
  }
  listBatchesByStatus(): Promise<S.Batch[]> {
    return notYet();
  }
  listQueuedDeployments(): Promise<S.QueuedDeployment[]> {
    return notYet();
  }
  listQueuedLines(): Promise<S.BatchLine[]> {
    return notYet();
  }
  insertUpstreamBatch(): Promise<number> {
    return notYet();
  }
  getUpstreamBatch(): Promise<S.UpstreamBatchRow | undefined> {
    return notYet();
  }
  claimUpstreamBatches(): Promise<S.UpstreamBatchRow[]> {
    return notYet();
  }
  updateUpstreamBatch(): Promise<boolean> {
    return notYet();
  }
  listUpstreamLines(): Promise<S.BatchLine[]> {
    return notYet();
  }
  getLineByRequestId(): Promise<S.BatchLine | undefined> {
    return notYet();
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

function notYet(): Promise<never> {
  return Promise.reject(new Error('not built yet'));
}
