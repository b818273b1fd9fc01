// Config errors name variables and never print their values (#35): `provider: "${SOME_ENV}"` where a
// provider name is expected made `herd check` and `herd serve` print the variable's value. A sentinel value
// must appear in no error, whichever path reports it: the schema, the CLI's last word, a short value.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';

const SENTINEL = 'SENTINEL-9f8e7d6c5b4a-secret';
const CLI = resolve('src/cli/herd.ts');

const CONFIG = `providers:
  openai: { type: openai, api_key_env: SECRETS_TEST_OPENAI_KEY }
models:
  m1:
    price: { input: 1, output: 1 }
    deployments: [{ provider: "\${SOME_ENV}" }]
    fallbacks: ["\${SOME_ENV}"]
`;

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('expected an error');
}

describe('config errors and environment values', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'herd-config-secrets-'));
    writeFileSync(join(dir, 'herd.yaml'), CONFIG);
    writeFileSync(join(dir, 'url.yaml'), 'providers:\n  openai: { type: openai, base_url: "${SOME_ENV}" }\n');
    writeFileSync(join(dir, 'port.yaml'), 'server:\n  http_port: "${SHORT_ENV}"\n');
    // Valid for the schema; fails only when serve listens on it (an error from Node, printed by the CLI).
    writeFileSync(join(dir, 'host.yaml'), 'server:\n  host: "${SOME_ENV}"\n  http_port: 0\n  grpc_port: 0\n  metrics_port: 0\nserving:\n  model_repository: [.]\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('schema errors name the field and the variable, never the value', () => {
    const message = errorOf(() => parseHerdConfig(CONFIG, 'herd.yaml', { SOME_ENV: SENTINEL }));
    assert.doesNotMatch(message, new RegExp(SENTINEL));
    assert.match(message, /models\.m1\.deployments\[0\]\.provider: unknown provider '\(the value of \$SOME_ENV\)'/);
    assert.match(message, /models\.m1\.fallbacks\[0\]: unknown model '\(the value of \$SOME_ENV\)'/);
  });

  it('a short value is redacted too in the errors about its own field', () => {
    const message = errorOf(() =>
      parseHerdConfig('models:\n  m1:\n    price: { input: 1, output: 1 }\n    deployments: [{ provider: "${SOME_ENV}" }]\n', 'h.yaml', { SOME_ENV: 'ab' }),
    );
    assert.doesNotMatch(message, /'ab'/);
    assert.match(message, /\$SOME_ENV/);
  });

  for (const [file, command] of [
    ['herd.yaml', 'check'],
    ['herd.yaml', 'serve'],
    ['url.yaml', 'check'],
    ['port.yaml', 'serve'],
    ['host.yaml', 'serve'],
  ] as const) {
    it(`herd ${command} ${file}: the error names the variable and the value appears nowhere in its output`, () => {
      const args = command === 'check' ? ['check', join(dir, file)] : ['serve', '--config', join(dir, file)];
      const run = spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], {
        encoding: 'utf8',
        env: { ...process.env, SOME_ENV: SENTINEL, SHORT_ENV: 'x1', SECRETS_TEST_OPENAI_KEY: 'k' },
        timeout: 60_000,
      });
      assert.equal(run.status, 1, `${run.stdout}${run.stderr}`);
      assert.doesNotMatch(`${run.stdout}${run.stderr}`, new RegExp(SENTINEL));
      assert.match(run.stderr, /^herd: .*\$(SOME_ENV|SHORT_ENV)/s);
    });
  }
});
