import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { defaultHerdConfig, loadHerdConfigFile, parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { HerdError } from '../../src/core/errors.ts';

const throwsWith = (fn: () => unknown, pattern: RegExp) => assert.throws(fn, (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && pattern.test(err.message));

test('the example herd.yaml loads and resolves the repository next to the file', () => {
  const { config } = loadHerdConfigFile('examples/herd.yaml');
  assert.equal(config.server.http_port, 8000);
  assert.deepEqual(config.serving.model_repository, [resolve('examples/model_repository')]);
  assert.equal(config.serving.model_control_mode, 'none');
});

test('defaults match tritonserver: 8000/8001/8002, 64 MB bodies, strict readiness', () => {
  const c = defaultHerdConfig();
  assert.equal(c.server.http_port, 8000);
  assert.equal(c.server.grpc_port, 8001);
  assert.equal(c.server.metrics_port, 8002);
  assert.equal(c.server.http_max_input_size, 64 * 1024 * 1024);
  assert.equal(c.serving.strict_readiness, true);
});

test('a schema error names file, line, column and path', () => {
  const text = 'server:\n  http_port: "eighty"\n';
  throwsWith(() => parseHerdConfig(text, 'h.yaml'), /^h\.yaml:2:14: server\.http_port: /);
});

test('an unknown key is an error at its position', () => {
  throwsWith(() => parseHerdConfig('serving:\n  model_repositry: [a]\n', 'h.yaml'), /^h\.yaml:2:3: serving: .*model_repositry/);
});

test('a bad enum value lists the valid ones', () => {
  throwsWith(() => parseHerdConfig('serving:\n  model_control_mode: sometimes\n', 'h.yaml'), /h\.yaml:2:23: serving\.model_control_mode: .*none.*poll.*explicit/s);
});

test('YAML syntax errors carry line and column', () => {
  throwsWith(() => parseHerdConfig('server:\n  http_port: [1, 2\n', 'bad.yaml'), /^bad\.yaml:\d+:\d+: /);
});

test('${VAR} and ${VAR:-default} interpolate from the environment; a missing one is an error', () => {
  const c = parseHerdConfig('server:\n  host: ${HOST_X}\nserving:\n  model_repository: ["${REPO_X:-/models}"]\n', '/etc/h.yaml', { HOST_X: '127.0.0.1' });
  assert.equal(c.server.host, '127.0.0.1');
  assert.deepEqual(c.serving.model_repository, ['/models']);
  throwsWith(() => parseHerdConfig('server:\n  host: ${NOPE_X}\n', 'h.yaml', {}), /h\.yaml:2:9: server\.host: environment variable NOPE_X is not set/);
});

test('a missing file is a clear error', () => {
  throwsWith(() => loadHerdConfigFile('/nonexistent/herd.yaml'), /cannot read config file \/nonexistent\/herd\.yaml/);
});

test('YAML aliases without an anchor, or too many of them, are INVALID_ARG naming the file (found by fuzzing)', () => {
  // The yaml library throws a ReferenceError for these from toJS(), outside doc.errors.
  const bomb = `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [${Array(10).fill('*a').join(', ')}]\nc: &c [${Array(10).fill('*b').join(', ')}]\nd: [${Array(10).fill('*c').join(', ')}]\n`;
  for (const text of ['*\u0000', 'server: *nowhere\n', bomb]) {
    assert.throws(
      () => parseHerdConfig(text, 'herd.yaml'),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && err.message.startsWith('herd.yaml'),
    );
  }
});
