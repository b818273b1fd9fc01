// The Settings page's data from a real herd.yaml: each value's source (file position, ${VAR}, flag, default) and the masks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConfigSources, describeConfigSources } from '../../src/config/describe-config-sources.ts';
import { defaultHerdConfig, loadHerdConfigFile } from '../../src/config/load-herd-config.ts';

const YAML = `# a gateway behind a PostgreSQL ledger
server:
  http_port: 9000
  host: \${HOST_X:-0.0.0.0}
  restricted_api:
    inference: x-team=letmein
  trusted_proxies: [10.0.0.0/8, 127.0.0.1]
serving:
  backend_config:
    python:
      api_token: tok-123
auth:
  master_key_env: ADMIN_KEY_X
providers:
  relay:
    type: openai
    base_url: https://relay.example/v1
    api_key_env: RELAY_KEY_X
    headers:
      x-auth-token: hdr-secret
      openai-organization: org-1
models:
  gpt-4o:
    price: { input: 2.5, output: 10 }
    deployments:
      - provider: relay
        upstream_model: gpt-4o-2024-08-06
      - provider: relay
        weight: 2
billing:
  ledger: postgres://herd:\${PG_PASSWORD_X}@db.internal:5432/herd
  alerts:
    webhook_url: https://hooks.example/services/T0/B0/XYZ
    secret_env: ALERT_SECRET_X
`;

function describe(env: NodeJS.ProcessEnv, flags?: Record<string, string>): ConfigSources {
  const dir = mkdtempSync(join(tmpdir(), 'herd-settings-'));
  const file = join(dir, 'herd.yaml');
  writeFileSync(file, YAML);
  const loaded = loadHerdConfigFile(file, env);
  return describeConfigSources({ config: loaded.config, file: { path: file, text: loaded.text ?? '', envNames: loaded.envNames }, flags });
}

function entry(sources: ConfigSources, path: string) {
  const found = sources.entries.find((e) => e.path === path);
  assert.ok(found, `no entry ${path} in ${sources.entries.map((e) => e.path).join(', ')}`);
  return found;
}

test('a value written in herd.yaml names the file, line and column; an unwritten one is a default', () => {
  const s = describe({ PG_PASSWORD_X: 'pg-pass' });
  assert.match(s.configFile ?? '', /herd\.yaml$/);
  assert.deepEqual(entry(s, 'server.http_port'), { path: 'server.http_port', value: 9000, source: 'herd.yaml:3:14' });
  assert.deepEqual(entry(s, 'server.grpc_port'), { path: 'server.grpc_port', value: 8001, source: 'default' });
  assert.deepEqual(entry(s, 'server.limits.max_connections'), { path: 'server.limits.max_connections', value: 10_000, source: 'default' });
  // ${VAR:-default} with the variable unset: the file's text is the source.
  assert.deepEqual(entry(s, 'server.host'), { path: 'server.host', value: '0.0.0.0', source: 'herd.yaml:4:9' });
});

test('nested models and providers: deployments by index, defaults inside them, arrays of scalars as one entry', () => {
  const s = describe({ PG_PASSWORD_X: 'pg-pass' });
  assert.deepEqual(entry(s, 'models.gpt-4o.deployments[0].provider'), { path: 'models.gpt-4o.deployments[0].provider', value: 'relay', source: 'herd.yaml:26:19' });
  assert.equal(entry(s, 'models.gpt-4o.deployments[0].upstream_model').source, 'herd.yaml:27:25');
  assert.deepEqual(entry(s, 'models.gpt-4o.deployments[1].weight'), { path: 'models.gpt-4o.deployments[1].weight', value: 2, source: 'herd.yaml:29:17' });
  assert.deepEqual(entry(s, 'models.gpt-4o.deployments[0].weight'), { path: 'models.gpt-4o.deployments[0].weight', value: 1, source: 'default' });
  assert.equal(entry(s, 'models.gpt-4o.price.output').source, 'herd.yaml:24:34');
  assert.equal(entry(s, 'providers.relay.retry.attempts').source, 'default');
  assert.deepEqual(entry(s, 'server.trusted_proxies'), { path: 'server.trusted_proxies', value: ['10.0.0.0/8', '127.0.0.1'], source: 'herd.yaml:7:20' });
  assert.deepEqual(entry(s, 'models.gpt-4o.aliases'), { path: 'models.gpt-4o.aliases', value: [], source: 'default' });
  assert.equal(
    s.entries.some((e) => e.path === 'models.gpt-4o.deployments'),
    false,
  );
});

test('a value from ${VAR} names the variable; a URL password is masked whatever its source', () => {
  const s = describe({ PG_PASSWORD_X: 'pg-pass', HOST_X: '127.0.0.1' });
  assert.deepEqual(entry(s, 'billing.ledger'), { path: 'billing.ledger', value: 'postgres://herd:••••@db.internal:5432/herd', source: 'env PG_PASSWORD_X' });
  assert.deepEqual(entry(s, 'server.host'), { path: 'server.host', value: '127.0.0.1', source: 'env HOST_X' });
  // The key store follows a PostgreSQL ledger: derived, so a default, and masked the same way.
  assert.deepEqual(entry(s, 'auth.db'), { path: 'auth.db', value: 'postgres://herd:••••@db.internal:5432/herd', source: 'default' });
  assert.ok(!JSON.stringify(s).includes('pg-pass'), 'the password appears nowhere');
});

test('secret-looking keys are masked; *_env fields and ordinary headers are shown as written', () => {
  const s = describe({ PG_PASSWORD_X: 'pg-pass' });
  const text = JSON.stringify(s);
  for (const secret of ['tok-123', 'hdr-secret', 'letmein', 'XYZ']) assert.ok(!text.includes(secret), `${secret} is masked`);
  assert.equal(entry(s, 'serving.backend_config.python.api_token').value, '••••');
  assert.equal(entry(s, 'providers.relay.headers.x-auth-token').value, '••••');
  assert.equal(entry(s, 'providers.relay.headers.openai-organization').value, 'org-1');
  assert.equal(entry(s, 'server.restricted_api.inference').value, 'x-team=••••');
  assert.equal(entry(s, 'billing.alerts.webhook_url').value, 'https://hooks.example/••••');
  assert.deepEqual(entry(s, 'providers.relay.api_key_env'), { path: 'providers.relay.api_key_env', value: 'RELAY_KEY_X', source: 'herd.yaml:18:18' });
  assert.equal(entry(s, 'auth.master_key_env').value, 'ADMIN_KEY_X');
  assert.equal(entry(s, 'billing.alerts.secret_env').value, 'ALERT_SECRET_X');
  assert.equal(entry(s, 'providers.relay.base_url').value, 'https://relay.example/v1');
});

test('a flag names itself as the source of its path and everything under it', () => {
  const s = describe({ PG_PASSWORD_X: 'pg-pass' }, { 'server.http_port': '--http-port', 'serving.backend_config.python.api_token': '--backend-config' });
  assert.deepEqual(entry(s, 'server.http_port'), { path: 'server.http_port', value: 9000, source: 'flag --http-port' });
  assert.equal(entry(s, 'serving.backend_config.python.api_token').source, 'flag --backend-config');
  assert.equal(entry(s, 'server.grpc_port').source, 'default');
});

test('without a file: configFile null and every value a default', () => {
  const s = describeConfigSources({ config: defaultHerdConfig() });
  assert.equal(s.configFile, null);
  assert.ok(s.entries.length > 40);
  assert.deepEqual(
    s.entries.filter((e) => e.source !== 'default'),
    [],
  );
  assert.deepEqual(entry(s, 'serving.model_repository'), { path: 'serving.model_repository', value: [], source: 'default' });
});

test('a value derived from a scalar (serving.identity: name) points at that scalar; YAML aliases resolve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-settings-'));
  const file = join(dir, 'h.yaml');
  writeFileSync(file, 'serving:\n  identity: ${WHO_X}\n  model_repository: &repos [./a]\n  load_model: *repos\n  model_control_mode: explicit\n');
  const loaded = loadHerdConfigFile(file, { WHO_X: 'batch-jobs' });
  const s = describeConfigSources({ config: loaded.config, file: { path: file, text: loaded.text ?? '', envNames: loaded.envNames } });
  assert.deepEqual(entry(s, 'serving.identity.name'), { path: 'serving.identity.name', value: 'batch-jobs', source: 'env WHO_X' });
  assert.deepEqual(entry(s, 'serving.load_model'), { path: 'serving.load_model', value: ['./a'], source: 'h.yaml:4:15' });
  assert.equal(entry(s, 'serving.model_repository').source, 'h.yaml:3:28');
});

test('a value from a secret-looking variable is masked under any key; a URL from one keeps all but its password', () => {
  const dir = mkdtempSync(join(tmpdir(), 'herd-settings-'));
  const file = join(dir, 'herd.yaml');
  const yaml = [
    'providers:',
    '  relay:',
    '    type: openai',
    '    headers: { openai-project: "${PROJECT_TOKEN_X}", helicone-auth: "Bearer hk-1", x-team: "${TEAM_X}" }',
    'cache:',
    '  redis: { url: "${REDIS_SECRET_URL_X}" }',
    '',
  ].join('\n');
  writeFileSync(file, yaml);
  const env = { PROJECT_TOKEN_X: 'proj-777', TEAM_X: 'search', REDIS_SECRET_URL_X: 'redis://:rpw@cache:6379' };
  const loaded = loadHerdConfigFile(file, env);
  const s = describeConfigSources({ config: loaded.config, file: { path: file, text: loaded.text ?? '', envNames: loaded.envNames } });
  assert.deepEqual(entry(s, 'providers.relay.headers.openai-project'), { path: 'providers.relay.headers.openai-project', value: '••••', source: 'env PROJECT_TOKEN_X' });
  assert.equal(entry(s, 'providers.relay.headers.helicone-auth').value, '••••');
  assert.deepEqual(entry(s, 'providers.relay.headers.x-team'), { path: 'providers.relay.headers.x-team', value: 'search', source: 'env TEAM_X' });
  assert.deepEqual(entry(s, 'cache.redis.url'), { path: 'cache.redis.url', value: 'redis://:••••@cache:6379', source: 'env REDIS_SECRET_URL_X' });
  for (const secret of ['proj-777', 'hk-1', 'rpw']) assert.ok(!JSON.stringify(s).includes(secret), `${secret} is masked`);
});
