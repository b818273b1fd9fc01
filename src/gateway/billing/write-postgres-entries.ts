// Writes a batch of ledger rows to PostgreSQL: one transaction per batch, json_populate_recordset turning
// the whole batch into rows with one parameter, rolled up into ledger_daily in the same statement.
import { findInlineAttempt } from './inline-attempt.ts';
import { ATTEMPT_COLUMNS, REQUEST_COLUMNS, type DbRow, convertAttemptToRow, convertRequestToRow } from './ledger-rows.ts';
import type { LedgerEntry } from './ledger-write-queue.ts';
import type { PostgresRunner } from './postgres-runner.ts';
import { buildDailyUpsert } from './ledger-daily.ts';

const ROLL_UP = buildDailyUpsert('inserted', 'TRUE');

export async function writePostgresEntries(runner: PostgresRunner, entries: readonly LedgerEntry[]): Promise<void> {
  const requests: DbRow[] = [];
  const attempts: DbRow[] = [];
  for (const { request, attempts: tried } of entries) {
    const inline = findInlineAttempt(request, tried);
    requests.push(convertRequestToRow(request, inline));
    if (!inline) for (const attempt of tried) attempts.push(convertAttemptToRow(attempt));
  }
  await runner.transaction(async (c) => {
    // The rollup sums only the rows this statement inserted (RETURNING skips conflicts): a replayed batch adds nothing twice.
    await c.query(
      `WITH inserted AS (
        INSERT INTO ledger_requests (${REQUEST_COLUMNS.join(', ')}) SELECT ${REQUEST_COLUMNS.join(', ')}
        FROM json_populate_recordset(NULL::ledger_requests, $1) ON CONFLICT DO NOTHING RETURNING *
      ) ${ROLL_UP}`,
      [JSON.stringify(requests)],
    );
    if (attempts.length > 0) {
      await c.query(
        `INSERT INTO ledger_attempts (${ATTEMPT_COLUMNS.join(', ')}) SELECT ${ATTEMPT_COLUMNS.join(', ')}
          FROM json_populate_recordset(NULL::ledger_attempts, $1) a
          WHERE NOT EXISTS (SELECT 1 FROM ledger_requests r WHERE r.request_id = a.request_id AND r.attempt_outcome IS NOT NULL)
          ON CONFLICT DO NOTHING`,
        [JSON.stringify(attempts)],
      );
    }
  });
}
