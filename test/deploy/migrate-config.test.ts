// The sqlite overlay's init container as a real command: `herd migrate --config` on that overlay's herd.yaml
// (its /data paths moved to a temp folder) exits 0, creates the database, and exits 0 again when run twice,
// as every pod restart does.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'herd-deploy-migrate-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('herd migrate on the sqlite overlay’s herd.yaml creates the database and is idempotent', () => {
  const config = join(dir, 'herd.yaml');
  writeFileSync(config, readFileSync('deploy/kubernetes/overlays/sqlite/herd.yaml', 'utf8').replaceAll('/data/', `${dir}/`));
  for (const run of [1, 2]) {
    const out = spawnSync(process.execPath, [resolve('bin/herd.mjs'), 'migrate', '--config', config], { encoding: 'utf8', cwd: dir });
    assert.equal(out.status, 0, `run ${run}:\n${out.stdout}\n${out.stderr}`);
  }
  assert.ok(existsSync(join(dir, 'herd.db')));
});
