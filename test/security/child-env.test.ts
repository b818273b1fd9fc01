// Which of Herd's environment a Python model sees, asked from inside the model: the allow-list and what its
// config.pbtxt names (HERD_CHILD_ENV), never provider keys, the master key or database URLs set in Herd's env.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { postJson } from '../e2e/start-test-server.ts';
import { TEST_PYTHON } from '../python-interpreter.ts';

const SECRETS: Record<string, string> = {
  OPENAI_API_KEY: 'sentinel-openai',
  ANTHROPIC_API_KEY: 'sentinel-anthropic',
  HERD_MASTER_KEY: 'sentinel-master',
  DATABASE_URL: 'postgres://sentinel@db/x',
  REDIS_URL: 'redis://sentinel:6379',
  UPSTREAM_CREDENTIAL: 'sentinel-configured-provider-key',
  UNRELATED_SETTING: 'sentinel-unrelated',
};
/** With a master key set, the model-repository API needs it (control-apis.test.ts). */
const MASTER = { authorization: `Bearer ${SECRETS['HERD_MASTER_KEY']}` };
const PASSED: Record<string, string> = { HF_HOME: '/opt/hf-cache', PYTHONIOENCODING: 'utf-8', LC_ALL: 'C.UTF-8', TRITON_SERVER_VERSION: '2.59.0' };

const ENV_MODEL = `import json, os
import numpy as np
import triton_python_backend_utils as pb_utils

class TritonPythonModel:
    def execute(self, requests):
        seen = json.dumps(dict(os.environ))
        return [pb_utils.InferenceResponse([pb_utils.Tensor("ENV", np.array([seen.encode()], dtype=np.object_))]) for _ in requests]
`;
const IO = 'max_batch_size: 0\ninput [ { name: "IN", data_type: TYPE_INT32, dims: [ 1 ] } ]\noutput [ { name: "ENV", data_type: TYPE_STRING, dims: [ 1 ] } ]\n';

/** The test interpreter when it has numpy, else `python3` on PATH if that one has (a pyenv machine without python3-numpy). */
function pythonWithNumpy(): string {
  for (const candidate of [TEST_PYTHON, 'python3']) {
    const probe = spawnSync(candidate, ['-c', 'import numpy, sys; print(sys.executable)'], { encoding: 'utf8' });
    if (probe.status === 0) return probe.stdout.trim();
  }
  return TEST_PYTHON;
}

let root: string;
let server: HerdServer;
const saved = new Map<string, string | undefined>();

function pythonModel(repo: string, name: string, extra: string): void {
  mkdirSync(join(repo, name, '1'), { recursive: true });
  writeFileSync(join(repo, name, 'config.pbtxt'), `name: "${name}"\nbackend: "python"\n${IO}${extra}`);
  writeFileSync(join(repo, name, '1', 'model.py'), ENV_MODEL);
}

before(async () => {
  for (const [k, v] of Object.entries({ ...SECRETS, ...PASSED })) {
    saved.set(k, process.env[k]);
    process.env[k] = v;
  }
  root = mkdtempSync(join(tmpdir(), 'herd-child-env-'));
  const repo = join(root, 'repo');
  pythonModel(repo, 'env_plain', '');
  pythonModel(repo, 'env_named', 'parameters { key: "HERD_CHILD_ENV" value { string_value: "HF_HOME, NOT_SET_ANYWHERE" } }\n');
  pythonModel(repo, 'env_wants_key', 'parameters { key: "HERD_CHILD_ENV" value { string_value: "OPENAI_API_KEY" } }\n');
  pythonModel(repo, 'env_wants_configured', 'parameters { key: "HERD_CHILD_ENV" value { string_value: "UPSTREAM_CREDENTIAL" } }\n');
  pythonModel(repo, 'env_wants_db', 'parameters { key: "HERD_CHILD_ENV" value { string_value: "DATABASE_URL" } }\n');
  server = await startHerd(
    herdConfigSchema.parse({
      server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0 },
      serving: { model_repository: [repo], model_control_mode: 'explicit', load_model: ['*'], backend_config: { python: { 'python-executable': pythonWithNumpy() } } },
      providers: { upstream: { type: 'openai', api_key_env: 'UPSTREAM_CREDENTIAL' } },
    }),
  );
});
after(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
  for (const [k, v] of saved) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

async function environmentOf(model: string): Promise<Record<string, string>> {
  const res = await postJson(`${server.httpUrl}/v2/models/${model}/infer`, { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [0] }] });
  assert.equal(res.status, 200, res.body.toString());
  const out = (res.json() as { outputs: { data: string[] }[] }).outputs[0]?.data[0] ?? '';
  return JSON.parse(out) as Record<string, string>;
}

function assertNoSecret(env: Record<string, string>): void {
  for (const name of Object.keys(SECRETS)) assert.equal(env[name], undefined, `${name} reached the model's process`);
  for (const value of Object.values(SECRETS)) assert.ok(!Object.values(env).includes(value), `a secret's value reached the model's process`);
}

it("a Python model's process sees the allow-list (PATH, HOME, locale, PYTHON*, TRITON_*) and none of Herd's secrets", async () => {
  const env = await environmentOf('env_plain');
  assertNoSecret(env);
  assert.equal(env['PATH'], process.env['PATH']);
  assert.equal(env['PYTHONIOENCODING'], 'utf-8');
  assert.equal(env['LC_ALL'], 'C.UTF-8');
  assert.equal(env['TRITON_SERVER_VERSION'], '2.59.0');
  assert.equal(env['HF_HOME'], undefined, 'a variable the config does not name stays out');
  const unexpected = Object.keys(env).filter((k) => !/^(PATH|HOME|LANG|LANGUAGE|TZ|LC_.*|PYTHON.*|TRITON_.*)$/.test(k));
  assert.deepEqual(unexpected, [], 'only allow-listed variables');
});

it('a variable the on-disk config names is passed; an unset one is simply absent', async () => {
  const env = await environmentOf('env_named');
  assertNoSecret(env);
  assert.equal(env['HF_HOME'], '/opt/hf-cache');
  assert.equal(env['NOT_SET_ANYWHERE'], undefined);
});

it('a config naming a provider key, a configured key variable or a database URL is refused with the parameter named', async () => {
  const index = (await postJson(`${server.httpUrl}/v2/repository/index`, {}, MASTER)).json() as { name: string; state?: string; reason?: string }[];
  for (const [model, variable] of [
    ['env_wants_key', 'OPENAI_API_KEY'],
    ['env_wants_configured', 'UPSTREAM_CREDENTIAL'],
    ['env_wants_db', 'DATABASE_URL'],
  ] as const) {
    const entry = index.find((e) => e.name === model);
    assert.equal(entry?.state, 'UNAVAILABLE', model);
    assert.match(entry?.reason ?? '', new RegExp(`parameter HERD_CHILD_ENV names ${variable}, which holds one of Herd's secrets`));
  }
});

it('a load-API override cannot name a variable its config.pbtxt does not', async () => {
  const config = JSON.stringify({
    name: 'env_plain',
    backend: 'python',
    max_batch_size: 0,
    input: [{ name: 'IN', data_type: 'TYPE_INT32', dims: [1] }],
    output: [{ name: 'ENV', data_type: 'TYPE_STRING', dims: [1] }],
    parameters: { HERD_CHILD_ENV: { string_value: 'HF_HOME' } },
  });
  const res = await postJson(`${server.httpUrl}/v2/repository/models/env_plain/load`, { parameters: { config } }, MASTER);
  assert.equal(res.status, 400, res.body.toString());
  assert.match((res.json() as { error: string }).error, /HERD_CHILD_ENV of a load-API config override names HF_HOME, which the model's config.pbtxt does not/);
  const env = await environmentOf('env_plain');
  assert.equal(env['HF_HOME'], undefined);
});
