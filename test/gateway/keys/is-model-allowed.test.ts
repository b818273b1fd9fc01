// The model check: '*', exact names, `*`/`?` globs as herd.yaml's pattern routes read them; a team's list applies too.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isModelAllowed } from '../../../src/gateway/keys/is-model-allowed.ts';
import type { TeamInfo } from '../../../src/gateway/keys/key-store.ts';

const team = (allowedModels: TeamInfo['allowedModels']): TeamInfo => ({ id: 'tm_x', name: 'x', allowedModels, budgets: [], timezone: 'UTC', alertThresholds: [] });

test('names, globs and a team list that narrows the key', () => {
  assert.ok(isModelAllowed({ allowedModels: '*' }, 'anything'));
  assert.ok(isModelAllowed({ allowedModels: ['gpt-4o*'] }, 'gpt-4o-mini'));
  assert.ok(isModelAllowed({ allowedModels: ['gpt-4o*'] }, 'gpt-4o'));
  assert.ok(!isModelAllowed({ allowedModels: ['gpt-4o*'] }, 'gpt-4.1'));
  assert.ok(isModelAllowed({ allowedModels: ['claude-?-haiku', 'deepseek-v3.2'] }, 'claude-3-haiku'));
  assert.ok(!isModelAllowed({ allowedModels: ['deepseek-v3.2'] }, 'deepseek-v3'));
  assert.ok(!isModelAllowed({ allowedModels: [] }, 'x'));
  assert.ok(isModelAllowed({ allowedModels: '*', team: team(['gpt-*']) }, 'gpt-5'));
  assert.ok(!isModelAllowed({ allowedModels: '*', team: team(['gpt-*']) }, 'claude-3'), "the team's list applies as well");
  assert.ok(!isModelAllowed({ allowedModels: ['claude-3'], team: team('*') }, 'gpt-5'));
});
