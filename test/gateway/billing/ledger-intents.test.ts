// Attempt intents: spooled before a call, they survive a killed process and turn into `interrupted`
// attempt rows (and a request row when the request has none) exactly once at recovery.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { type AttemptIntent, INTERRUPTED, recoverIntents } from '../../../src/gateway/billing/ledger-intents.ts';
import { LedgerSpool } from '../../../src/gateway/billing/ledger-spool.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { sampleAttempt, sampleRequest } from './ledger-contract.ts';

const intent = (requestId: string, attempt: number): AttemptIntent => ({
  requestId,
  attempt,
  keyId: 'k1',
  requestedModel: 'auto',
  model: 'm',
  provider: 'p',
  upstreamModel: 'um',
  startedAt: 1000 + attempt,
});

test('intents survive the process; only those no entry settled become interrupted rows', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-intent-'));
  const first = LedgerSpool.open(dir).spool;
  first.intend(intent('a', 1));
  first.append([{ request: sampleRequest({ requestId: 'a' }), attempts: [sampleAttempt({ requestId: 'a', attempt: 1 })] }]);
  first.intend(intent('b', 1));
  first.intend(intent('b', 2));
  // killed here: no close(); a torn intent line was never sent
  const file = readdirSync(dir).find((f) => f.endsWith('.jsonl')) as string;
  appendFileSync(join(dir, file), '{"intent":["c",1,');
  const { leftovers, intents } = LedgerSpool.open(dir);
  assert.deepEqual(
    intents.map((i) => `${i.requestId}/${i.attempt}`),
    ['a/1', 'b/1', 'b/2'],
  );
  assert.equal(leftovers.length, 1, 'intent lines are not entries');
  const recovered = recoverIntents(intents, leftovers, 'USD');
  assert.equal(recovered.length, 1);
  const [b] = recovered;
  assert.equal(b?.request.requestId, 'b');
  assert.equal(b?.request.status, INTERRUPTED);
  assert.equal(b?.request.attempts, 2);
  assert.deepEqual(
    b?.attempts.map((a) => [a.attempt, a.outcome, a.httpStatus, a.promptTokens, a.completionTokens]),
    [
      [1, INTERRUPTED, undefined, 0, 0],
      [2, INTERRUPTED, undefined, 0, 0],
    ],
  );
});

test('recovery is idempotent: an attempt the database already holds is not recovered again', () => {
  const held = new Set(['b/1']);
  const again = recoverIntents([intent('b', 1), intent('b', 1)], [], 'USD', (r, n) => held.has(`${r}/${n}`));
  assert.deepEqual(again, []);
  const twice = recoverIntents([intent('d', 1), intent('d', 1)], [], 'USD');
  assert.equal(twice[0]?.attempts.length, 1, 'a duplicated intent line gives one row');
});

test('a SQLite ledger turns a dead process’s intents into interrupted rows exactly once, across a second crash', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-intent-ledger-'));
  const db = join(dir, 'herd.db');
  const spoolDir = `${db}.spool`;
  const dead = LedgerSpool.open(spoolDir).spool;
  dead.intend(intent('x', 1));
  const file = readdirSync(spoolDir).find((f) => f.endsWith('.jsonl')) as string;
  const text = readFileSync(join(spoolDir, file), 'utf8');
  const count = () => {
    const sql = new Database(db, { readonly: true });
    try {
      return sql
        .prepare("SELECT (SELECT count(*) FROM ledger_attempts_all WHERE outcome = 'interrupted') AS a, (SELECT count(*) FROM ledger_requests WHERE status = 'interrupted') AS r")
        .get();
    } finally {
      sql.close();
    }
  };
  for (let life = 0; life < 2; life++) {
    // The second life: the same file again, as if the process died after writing its rows but before deleting it.
    if (life === 1) writeFileSync(join(spoolDir, file), text);
    writeFileSync(join(spoolDir, 'owner.pid'), '999999999\n');
    const ledger = SqliteLedger.open(db, { spoolDir });
    await ledger.close();
    assert.deepEqual(count(), { a: 1, r: 1 });
  }
});
