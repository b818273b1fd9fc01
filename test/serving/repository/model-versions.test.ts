import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { listVersionFolders, selectVersions } from '../../../src/serving/repository/model-versions.ts';
import { scanRepositories } from '../../../src/serving/repository/scan-repositories.ts';

test('only numeric folders are versions, sorted numerically', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-versions-'));
  for (const name of ['1', '10', '2', 'backup', '3a']) mkdirSync(join(dir, name));
  writeFileSync(join(dir, '4'), 'a file, not a folder');
  assert.deepEqual(listVersionFolders(dir), [1, 2, 10]);
});

test('version_policy latest / all / specific', () => {
  const available = [1, 2, 5, 7];
  assert.deepEqual(selectVersions({ latest: { num_versions: 1 } }, available), [7]);
  assert.deepEqual(selectVersions({ latest: { num_versions: 2 } }, available), [5, 7]);
  assert.deepEqual(selectVersions({ latest: { num_versions: 9 } }, available), available);
  assert.deepEqual(selectVersions({ all: {} }, available), available);
  assert.deepEqual(selectVersions({}, available), available, 'version_policy {} loads every version, as in Triton');
  assert.deepEqual(selectVersions({ specific: { versions: [2, 3, 7] } }, available), [2, 7]);
});

test('a model name in two repositories is a problem naming both repositories by place, not by absolute path', () => {
  const a = mkdtempSync(join(tmpdir(), 'herd-repo-a-'));
  const b = mkdtempSync(join(tmpdir(), 'herd-repo-b-'));
  mkdirSync(join(a, 'm'));
  mkdirSync(join(b, 'm'));
  mkdirSync(join(b, 'other'));
  const scan = scanRepositories([a, b, '/nonexistent-repo']);
  assert.deepEqual([...scan.models.keys()], ['m', 'other']);
  assert.equal(scan.problems.get('m'), `model 'm' exists in multiple model repositories: #1 (${basename(a)}), #2 (${basename(b)})`);
  assert.equal(scan.models.get('m')?.path, join(a, 'm'));
  assert.match(scan.errors[0] ?? '', /failed to read model repository '\/nonexistent-repo': ENOENT/);
});
