// `herd audit list|verify`: the changes made through `herd keys|teams` are listed with their actor
// (cli@host), filtered by action and object; a row edited in the database is found by verify, which
// exits 1 naming it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { runAuditList, runAuditVerify } from '../../src/cli/audit-command.ts';
import type { KeysIo } from '../../src/cli/keys-command.ts';
import { runKeysCreate, runKeysRevoke } from '../../src/cli/keys-command.ts';
import { runTeamsCreate } from '../../src/cli/teams-command.ts';

function captureIo(): KeysIo & { out: () => string; err: () => string; exitCode: number | undefined } {
  const out: string[] = [];
  const err: string[] = [];
  const io = {
    env: {},
    exitCode: undefined as number | undefined,
    stdout: (t: string) => void out.push(t),
    stderr: (t: string) => void err.push(t),
    setExitCode: (code: number) => {
      io.exitCode = code;
    },
    out: () => out.join(''),
    err: () => err.join(''),
  };
  return io;
}

test('audit list shows the CLI changes; verify passes, then finds an edited row and exits 1 naming it', async () => {
  const db = join(mkdtempSync(join(tmpdir(), 'herd-audit-cli-')), 'herd.db');
  await runTeamsCreate({ name: 'ops', db }, captureIo());
  await runKeysCreate({ name: 'deploy', team: 'ops', db }, captureIo());
  await runKeysRevoke('deploy', { db }, captureIo());

  const listed = captureIo();
  await runAuditList({ db }, listed);
  const table = listed.out();
  assert.match(table, /\| Seq \| Time +\| Actor +\| Action +\| Object +\| Count \| Source \|/);
  for (const action of ['team.create', 'key.create', 'key.revoke']) assert.ok(table.includes(action), action);
  assert.ok(table.includes(`cli@${hostname()}`), 'the actor is the person at this terminal');
  assert.ok(table.indexOf('key.revoke') < table.indexOf('team.create'), 'newest first');

  const filtered = captureIo();
  await runAuditList({ db, action: 'key.create', json: true }, filtered);
  const rows = JSON.parse(filtered.out());
  assert.deepEqual(
    rows.map((r: { action: string }) => r.action),
    ['key.create'],
  );
  const byObject = captureIo();
  await runAuditList({ db, object: rows[0].object, json: true }, byObject);
  assert.deepEqual(
    JSON.parse(byObject.out())
      .map((r: { action: string }) => r.action)
      .sort(),
    ['key.create', 'key.revoke'],
  );

  const ok = captureIo();
  await runAuditVerify({ db }, ok);
  assert.match(ok.out(), /is intact: 3 rows/);
  assert.equal(ok.exitCode, undefined);

  // Someone with the database file rewrites history: the key was never made by this actor.
  const raw = new Database(db);
  raw.prepare("UPDATE audit_events SET actor_name = 'someone else' WHERE seq = 2").run();
  raw.close();
  const broken = captureIo();
  await runAuditVerify({ db }, broken);
  assert.equal(broken.exitCode, 1);
  assert.match(broken.err(), /was changed: row 2 does not match/);
});
