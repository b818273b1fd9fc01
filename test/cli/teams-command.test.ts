// `herd teams` and the spend column of `herd keys list`: teams created, listed, shown with their keys,
// updated and deleted (refused while keys remain); with a herd.yaml naming a ledger, the list shows
// each budgeted key's spend this period read from that ledger.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import type { KeysIo } from '../../src/cli/keys-command.ts';
import { runKeysCreate, runKeysList, runKeysRevoke } from '../../src/cli/keys-command.ts';
import { registerTeamsCommand, runTeamsCreate, runTeamsDelete, runTeamsList, runTeamsShow, runTeamsUpdate } from '../../src/cli/teams-command.ts';
import type { HerdError } from '../../src/core/errors.ts';
import { planBudgets } from '../../src/gateway/billing/plan-budgets.ts';
import { SqliteLedger } from '../../src/gateway/billing/sqlite-ledger.ts';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';

function captureIo(now?: number): KeysIo & { text(): string } {
  const chunks: string[] = [];
  return { env: {}, stdout: (t) => void chunks.push(t), stderr: (t) => void chunks.push(t), text: () => chunks.join(''), ...(now !== undefined ? { now: () => now } : {}) };
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'herd-teams-cli-'));

test('teams: create, list, show with keys, update, delete refused while keys remain', async () => {
  const db = join(tempDir(), 'herd.db');
  const created = captureIo();
  await runTeamsCreate({ name: 'research', db, budget: ['month=500'], rpm: '100', models: 'gpt-4o*,claude-*' }, created);
  assert.match(
    created.text(),
    /^Created team tm_\w+ 'research' \(models: gpt-4o\*,claude-\*; rpm 100, 500\.00\/month\) in .*herd\.db\. Add keys with: herd keys create --name NAME --team research\n$/,
  );
  await runKeysCreate({ name: 'alice', team: 'research', db }, captureIo());
  const listed = captureIo();
  await runTeamsList({ db }, listed);
  assert.match(listed.text(), /\| research \| gpt-4o\*,claude-\* \| rpm 100, 500\.00\/month \| UTC +\|/);
  const shown = captureIo();
  await runTeamsShow('research', { db }, shown);
  assert.match(shown.text(), /^keys +alice$/m);
  const updated = captureIo();
  await runTeamsUpdate('research', { db, rpm: 'none', name: 'lab', timezone: 'Europe/Berlin' }, updated);
  assert.match(updated.text(), /^Updated team tm_\w+ 'lab' \(models: gpt-4o\*,claude-\*; 500\.00\/month\)/);
  await assert.rejects(runTeamsDelete('lab', { db }, captureIo()), (err: HerdError) => /key/.test(err.message));
  await runKeysRevoke('alice', { db }, captureIo());
  const deleted = captureIo();
  await runTeamsDelete('lab', { db }, deleted);
  assert.match(deleted.text(), /^Deleted team tm_\w+ 'lab'\.\n$/);
  const json = captureIo();
  const program = new Command('herd').exitOverride();
  registerTeamsCommand(program, json);
  await program.parseAsync(['teams', 'list', '--json', '--db', db], { from: 'user' });
  assert.equal(json.text(), '[]\n');
});

test("keys list shows each budgeted key's spend this period from herd.yaml's ledger", async () => {
  const dir = tempDir();
  const now = Date.parse('2026-12-06T10:00:00Z');
  const yaml = join(dir, 'herd.yaml');
  writeFileSync(yaml, `auth:\n  db: ${join(dir, 'keys.db')}\nbilling:\n  ledger: sqlite:${join(dir, 'ledger.db')}\n`);
  await runKeysCreate({ name: 'paid', config: yaml, budget: ['day=10'] }, captureIo(now));
  await runKeysCreate({ name: 'free', config: yaml }, captureIo(now));
  const store = await openKeyStore(join(dir, 'keys.db'));
  const ledger = SqliteLedger.open(join(dir, 'ledger.db'));
  try {
    const key = await store.findKey('paid');
    await ledger.reserve({ keyId: key.id, requestId: 'r', estimateMicros: 3_000_000, lines: planBudgets(key, now), atMs: now });
    await ledger.settle('r', { costMicros: 2_500_000 });
  } finally {
    await ledger.close();
    await store.close();
  }
  const listed = captureIo(now);
  await runKeysList({ config: yaml }, listed);
  assert.match(listed.text(), /\| paid +\| - +\| client \| active \| 2\.50 of 10\.00 \/day \|/);
  assert.match(listed.text(), /\| free +\| - +\| client \| active \| - +\|/, 'no budget of its own: no per-period spend is kept');
});
