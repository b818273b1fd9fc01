// docs/configuration.md is generated from the herd.yaml schema and the `herd` commands: it must match
// what the generator produces now, and it must name every key and flag they define.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createHerdProgram } from '../../src/cli/create-herd-program.ts';
import { CONFIGURATION_DOCS_PATH, generateConfigurationDocs } from '../../scripts/generate-configuration-docs.ts';

test('docs/configuration.md is what scripts/generate-configuration-docs.ts produces', () => {
  const { text } = generateConfigurationDocs();
  const onDisk = readFileSync(CONFIGURATION_DOCS_PATH, 'utf8');
  assert.ok(onDisk === text, 'docs/configuration.md is out of date with src/config or src/cli: run `npm run docs:config` and commit the result');
});

test('every herd.yaml key and every flag of every command is documented', () => {
  const { text } = generateConfigurationDocs();
  for (const key of [
    'server.http_port',
    'serving.model_control_mode',
    'providers.<name>.base_url',
    'models.<name>.deployments[].upstream_model',
    'routes.auto[].tier',
    'cache.redis.ttl_s',
    'limits.admission.models.<name>.concurrency',
    'billing.prices[].effective',
  ]) {
    assert.ok(text.includes(`| \`${key}\` |`), `no row for ${key}`);
  }
  const visit = (command: ReturnType<typeof createHerdProgram>, prefix: string): void => {
    for (const sub of command.commands) {
      const name = `${prefix} ${sub.name()}`;
      assert.ok(text.includes(`### \`${name}`), `no section for ${name}`);
      for (const option of sub.options) assert.ok(text.includes(`| \`${option.flags.replace(/\|/g, '\\|')}\` |`), `${name}: no row for ${option.flags}`);
      visit(sub, name);
    }
  };
  visit(createHerdProgram(), 'herd');
});

test('every key and flag has a description', () => {
  assert.deepEqual(generateConfigurationDocs().undescribed, []);
});
