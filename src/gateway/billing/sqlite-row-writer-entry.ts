// Main module of the SQLite ledger's row-writer thread (started through sqlite-row-writer-bootstrap.mjs): its own
// connection to the ledger file, each batch of request and attempt rows in one transaction, an answer per batch.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { ATTEMPT_COLUMNS, REQUEST_COLUMNS, createInsertSql } from './ledger-rows.ts';
import type { RowBatch, RowWriterConfig, RowWriterReply } from './sqlite-row-writer.ts';

const config = workerData as RowWriterConfig;
const port = parentPort;
if (port === null) throw new Error('sqlite-row-writer-entry runs as a worker thread');

type WriteBatch = (batch: RowBatch) => void;
let db: Database.Database | undefined;
let writeBatch: WriteBatch | undefined;

/** Opened (and its statements prepared) at the first batch that can be, so a missing table is a failed batch, retried later. */
function open(): WriteBatch {
  db ??= new Database(config.path);
  // As the main connection: wait for a reservation's lock rather than fail, sync as configured, a 2 MB page cache.
  db.pragma('busy_timeout = 5000');
  db.pragma(`synchronous = ${config.synchronous}`);
  db.pragma('cache_size = -2000');
  const insertRequest = db.prepare(createInsertSql('ledger_requests', REQUEST_COLUMNS));
  const insertAttempt = db.prepare(createInsertSql('ledger_attempts', ATTEMPT_COLUMNS));
  return db.transaction((batch: RowBatch) => {
    for (const row of batch.requests) insertRequest.run(row);
    for (const row of batch.attempts) insertAttempt.run(row);
  }).immediate;
}

port.on('message', (batch: RowBatch) => {
  let reply: RowWriterReply;
  try {
    writeBatch ??= open();
    writeBatch(batch);
    reply = { id: batch.id };
  } catch (err) {
    reply = { id: batch.id, error: err instanceof Error ? err.message : String(err) };
    // A connection that could not prepare may hold a stale schema (a table renamed back since): the next batch reconnects.
    if (writeBatch === undefined) {
      db?.close();
      db = undefined;
    }
  }
  port.postMessage(reply);
});
