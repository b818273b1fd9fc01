// The model repository is the boundary: a load over HTTP or gRPC whose config names a file outside the
// model's folder (model file, warmup data, labels, EXECUTION_ENV_PATH, a symlink) is refused naming the
// field, runs nothing (the outside programs would write a marker), and errors show no absolute paths.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { status as Status } from '@grpc/grpc-js';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { postJson, request, startTestServer } from '../e2e/start-test-server.ts';
import { PYTHON_BACKEND_CONFIG } from '../python-interpreter.ts';

const IO = {
  max_batch_size: 0,
  input: [{ name: 'IN', data_type: 'TYPE_INT32', dims: [1] }],
  output: [{ name: 'OUT', data_type: 'TYPE_INT32', dims: [1] }],
};
const JS_MODEL = "export function execute(requests) { return requests.map((r) => ({ outputs: [{ ...r.input('IN'), name: 'OUT' }] })); }\n";

/** tmp/repo (the repository) beside tmp/outside, whose programs leave a marker in tmp/markers when they run. */
function createLayout(): { root: string; repo: string; outside: string; markers: string } {
  const root = mkdtempSync(join(tmpdir(), 'herd-boundary-'));
  const repo = join(root, 'repo');
  const outside = join(root, 'outside');
  const markers = join(root, 'markers');
  for (const dir of [repo, outside, markers]) mkdirSync(dir);
  writeFileSync(join(outside, 'evil.mjs'), `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(markers, 'evil.mjs'))}, 'ran');\n${JS_MODEL}`);
  writeFileSync(join(outside, 'evil.py'), `open(${JSON.stringify(join(markers, 'evil.py'))}, "w").write("ran")\n`);
  writeFileSync(join(outside, 'envprog'), `#!/bin/sh\necho ran > ${join(markers, 'envprog')}\n`);
  chmodSync(join(outside, 'envprog'), 0o755);
  mkdirSync(join(outside, 'venv', 'bin'), { recursive: true });
  writeFileSync(join(outside, 'venv', 'bin', 'python3'), `#!/bin/sh\necho ran > ${join(markers, 'venv')}\n`);
  chmodSync(join(outside, 'venv', 'bin', 'python3'), 0o755);
  writeFileSync(join(outside, 'warm.bin'), Buffer.alloc(12345));
  writeFileSync(join(outside, 'labels.txt'), 'secret-label\n');

  const jsModel = (name: string, extra = '') => {
    mkdirSync(join(repo, name, '1'), { recursive: true });
    writeFileSync(
      join(repo, name, 'config.pbtxt'),
      `name: "${name}"\nbackend: "js"\nmax_batch_size: 0\ninput [ { name: "IN", data_type: TYPE_INT32, dims: [ 1 ] } ]\noutput [ { name: "OUT", data_type: TYPE_INT32, dims: [ 1 ] } ]\n${extra}`,
    );
  };
  jsModel('jsm');
  writeFileSync(join(repo, 'jsm', '1', 'model.mjs'), JS_MODEL);
  writeFileSync(join(repo, 'jsm', '1', 'other.mjs'), JS_MODEL);
  mkdirSync(join(repo, 'jsm', '1', 'warmup'));
  writeFileSync(join(repo, 'jsm', '1', 'warmup', 'in.bin'), Buffer.alloc(4));

  mkdirSync(join(repo, 'pym', '1'), { recursive: true });
  writeFileSync(
    join(repo, 'pym', 'config.pbtxt'),
    'name: "pym"\nbackend: "python"\nmax_batch_size: 0\ninput [ { name: "IN", data_type: TYPE_INT32, dims: [ 1 ] } ]\noutput [ { name: "OUT", data_type: TYPE_INT32, dims: [ 1 ] } ]\n',
  );
  writeFileSync(
    join(repo, 'pym', '1', 'model.py'),
    'import triton_python_backend_utils as pb_utils\n\nclass TritonPythonModel:\n    def execute(self, requests):\n        return [pb_utils.InferenceResponse([pb_utils.Tensor("OUT", pb_utils.get_input_tensor_by_name(r, "IN").as_numpy())]) for r in requests]\n',
  );

  // A model whose own file is a symlink to a program outside: refused from its on-disk config too.
  jsModel('linked');
  symlinkSync(join(outside, 'evil.mjs'), join(repo, 'linked', '1', 'model.mjs'));
  // The same through a symlinked version folder.
  mkdirSync(join(repo, 'linked_version'));
  writeFileSync(
    join(repo, 'linked_version', 'config.pbtxt'),
    'name: "linked_version"\nbackend: "js"\n' +
      'max_batch_size: 0\ninput [ { name: "IN", data_type: TYPE_INT32, dims: [ 1 ] } ]\noutput [ { name: "OUT", data_type: TYPE_INT32, dims: [ 1 ] } ]\n',
  );
  mkdirSync(join(outside, 'version'));
  writeFileSync(join(outside, 'version', 'model.mjs'), `import ${JSON.stringify(join(outside, 'evil.mjs'))};\n${JS_MODEL}`);
  symlinkSync(join(outside, 'version'), join(repo, 'linked_version', '1'));
  return { root, repo, outside, markers };
}

interface Refusal {
  name: string;
  model: string;
  config: (layout: ReturnType<typeof createLayout>) => Record<string, unknown>;
  field: RegExp;
}

const REFUSALS: Refusal[] = [
  {
    name: 'a js model file outside',
    model: 'jsm',
    config: () => ({ backend: 'js', ...IO, default_model_filename: '../../../outside/evil.mjs' }),
    field: /default_model_filename '\.\.\/\.\.\/\.\.\/outside\/evil\.mjs' resolves outside the model directory/,
  },
  {
    name: 'a js model file by absolute path',
    model: 'jsm',
    config: (l) => ({ backend: 'js', ...IO, default_model_filename: join(l.outside, 'evil.mjs') }),
    field: /default_model_filename '.*' resolves outside the model directory/,
  },
  {
    name: 'a python model file outside',
    model: 'pym',
    config: () => ({ backend: 'python', ...IO, default_model_filename: '../../../outside/evil.py' }),
    field: /default_model_filename '\.\.\/\.\.\/\.\.\/outside\/evil\.py' resolves outside the model directory/,
  },
  {
    name: 'an EXECUTION_ENV_PATH program outside',
    model: 'pym',
    config: (l) => ({ backend: 'python', ...IO, parameters: { EXECUTION_ENV_PATH: { string_value: join(l.outside, 'envprog') } } }),
    field: /EXECUTION_ENV_PATH '.*' resolves outside the model directory/,
  },
  {
    name: 'an EXECUTION_ENV_PATH environment reached from $$TRITON_MODEL_DIRECTORY',
    model: 'pym',
    config: () => ({ backend: 'python', ...IO, parameters: { EXECUTION_ENV_PATH: { string_value: '$$TRITON_MODEL_DIRECTORY/../../outside/venv' } } }),
    field: /EXECUTION_ENV_PATH '\$\$TRITON_MODEL_DIRECTORY\/\.\.\/\.\.\/outside\/venv' resolves outside the model directory/,
  },
  {
    name: 'warmup data outside',
    model: 'jsm',
    config: () => ({
      backend: 'js',
      ...IO,
      model_warmup: [{ name: 'w', batch_size: 1, inputs: { IN: { data_type: 'TYPE_INT32', dims: [1], input_data_file: '../../../../outside/warm.bin' } } }],
    }),
    field: /input_data_file '\.\.\/\.\.\/\.\.\/\.\.\/outside\/warm\.bin' resolves outside the model directory/,
  },
  {
    name: 'a label file outside',
    model: 'jsm',
    config: () => ({ backend: 'js', ...IO, output: [{ name: 'OUT', data_type: 'TYPE_INT32', dims: [1], label_filename: '../../outside/labels.txt' }] }),
    field: /label_filename '\.\.\/\.\.\/outside\/labels\.txt' resolves outside the model directory/,
  },
];

let layout: ReturnType<typeof createLayout>;
let server: HerdServer;
let grpc: KserveGrpcClient;

before(async () => {
  layout = createLayout();
  server = await startTestServer({ repositories: [layout.repo], controlMode: 'explicit', backendConfig: PYTHON_BACKEND_CONFIG });
  grpc = new KserveGrpcClient({ url: server.grpcUrl as string });
});
after(async () => {
  grpc.close();
  await server.close();
  rmSync(layout.root, { recursive: true, force: true });
});

/**
 * No program from outside ran, and no answer showed where the repository lives, the outside file's size,
 * or (unless the client named it itself) an outside path.
 */
function assertClean(message: string, clientNamedOutside = false): void {
  assert.deepEqual(readdirSync(layout.markers), [], 'a program outside the repository ran');
  assert.ok(!message.includes(layout.repo), `an absolute path leaked: ${message}`);
  if (!clientNamedOutside) assert.ok(!message.includes(layout.outside), `an outside path leaked: ${message}`);
  assert.ok(!message.includes('12345'), `the outside file's size leaked: ${message}`);
}

describe('a load-API config override naming a file outside the model directory is refused', () => {
  for (const refusal of REFUSALS) {
    it(`${refusal.name}: HTTP 400 naming the field`, async () => {
      const config = JSON.stringify({ name: refusal.model, ...refusal.config(layout) });
      const res = await postJson(`${server.httpUrl}/v2/repository/models/${refusal.model}/load`, { parameters: { config } });
      const error = (res.json() as { error: string }).error;
      assert.equal(res.status, 400, error);
      assert.match(error, refusal.field);
      assert.match(error, new RegExp(`model '${refusal.model}'`));
      assertClean(error, true);
    });
    it(`${refusal.name}: gRPC INVALID_ARGUMENT naming the field`, async () => {
      const config = JSON.stringify({ name: refusal.model, ...refusal.config(layout) });
      await assert.rejects(grpc.loadModel(refusal.model, { config }), (err: { grpcCode: number; message: string }) => {
        assert.equal(err.grpcCode, Status.INVALID_ARGUMENT, err.message);
        assert.match(err.message, refusal.field);
        assertClean(err.message, true);
        return true;
      });
    });
  }

  it("Triton's file: parameters leaving the model folder are refused before anything is written or run", async () => {
    const config = JSON.stringify({ name: 'jsm', backend: 'js', ...IO });
    const res = await postJson(`${server.httpUrl}/v2/repository/models/jsm/load`, {
      parameters: { config, 'file:../../outside/evil.mjs': Buffer.from(JS_MODEL).toString('base64') },
    });
    // Triton's status and words (its poll fails), then why.
    assert.equal(res.status, 500);
    assert.match((res.json() as { error: string }).error, /failed to poll from model repository: Invalid file parameter .* must stay within model directory\.$/);
    await assert.rejects(
      grpc.rpc('RepositoryModelLoad', {
        model_name: 'jsm',
        parameters: { config: { string_param: config }, 'file:../../../outside/x.mjs': { bytes_param: Buffer.from(JS_MODEL) } },
      }),
      (err: { grpcCode: number; message: string }) => err.grpcCode === Status.INTERNAL && /must stay within model directory/.test(err.message),
    );
    assert.ok(!existsSync(join(layout.root, 'outside', 'x.mjs')));
    assertClean('');
  });

  it('a symlink inside the model directory that points outside is refused, from the on-disk config too', async () => {
    for (const model of ['linked', 'linked_version']) {
      const res = await postJson(`${server.httpUrl}/v2/repository/models/${model}/load`, {});
      const error = (res.json() as { error: string }).error;
      assert.equal(res.status, 400, error);
      assert.match(error, /resolves outside the model directory/);
      assertClean(error);
      const entry = ((await postJson(`${server.httpUrl}/v2/repository/index`, {})).json() as { name: string; reason?: string }[]).find((e) => e.name === model);
      assert.match(entry?.reason ?? '', /resolves outside the model directory/);
      assertClean(entry?.reason ?? '');
    }
  });

  it('files inside the model directory keep working: another model file, warmup data, a label file', async () => {
    writeFileSync(join(layout.repo, 'jsm', 'labels.txt'), 'zero\n');
    const config = JSON.stringify({
      name: 'jsm',
      backend: 'js',
      ...IO,
      output: [{ name: 'OUT', data_type: 'TYPE_INT32', dims: [1], label_filename: 'labels.txt' }],
      default_model_filename: 'other.mjs',
      model_warmup: [{ name: 'w', batch_size: 1, inputs: { IN: { data_type: 'TYPE_INT32', dims: [1], input_data_file: 'in.bin' } } }],
    });
    const res = await postJson(`${server.httpUrl}/v2/repository/models/jsm/load`, { parameters: { config } });
    assert.equal(res.status, 200, res.body.toString());
    const infer = await postJson(`${server.httpUrl}/v2/models/jsm/infer`, { inputs: [{ name: 'IN', datatype: 'INT32', shape: [1], data: [7] }] });
    assert.equal(infer.status, 200, infer.body.toString());
    assert.deepEqual((infer.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, [7]);
    await grpc.loadModel('jsm');
    assert.equal(await grpc.modelReady('jsm'), true);
  });

  it('load errors name files by their place in the repository, never by absolute path', async () => {
    const config = JSON.stringify({ name: 'jsm', backend: 'js', ...IO, default_model_filename: 'missing.mjs' });
    const res = await postJson(`${server.httpUrl}/v2/repository/models/jsm/load`, { parameters: { config } });
    const error = (res.json() as { error: string }).error;
    assert.equal(res.status, 400, error);
    assert.match(error, /missing\.mjs/);
    assertClean(error);
    const warm = JSON.stringify({
      name: 'jsm',
      backend: 'js',
      ...IO,
      model_warmup: [{ name: 'w', batch_size: 1, inputs: { IN: { data_type: 'TYPE_INT32', dims: [1], input_data_file: 'absent.bin' } } }],
    });
    const warmRes = await postJson(`${server.httpUrl}/v2/repository/models/jsm/load`, { parameters: { config: warm } });
    const warmError = (warmRes.json() as { error: string }).error;
    assert.equal(warmRes.status, 400, warmError);
    assert.match(warmError, /jsm\/1\/warmup\/absent\.bin/);
    assertClean(warmError);
    const metadata = await request(`${server.httpUrl}/v2/models/jsm`);
    assertClean(metadata.body.toString());
  });
});

describe('serving.allow_files_outside_model_dir', () => {
  it('lets on-disk configs name files outside; a load-API override still cannot', async () => {
    const l = createLayout();
    // An on-disk config naming a shared file outside, as an operator would on purpose.
    mkdirSync(join(l.repo, 'shared', '1'), { recursive: true });
    writeFileSync(join(l.outside, 'shared.mjs'), JS_MODEL);
    writeFileSync(
      join(l.repo, 'shared', 'config.pbtxt'),
      `name: "shared"\nbackend: "js"\ndefault_model_filename: "../../../outside/shared.mjs"\nmax_batch_size: 0\ninput [ { name: "IN", data_type: TYPE_INT32, dims: [ 1 ] } ]\noutput [ { name: "OUT", data_type: TYPE_INT32, dims: [ 1 ] } ]\n`,
    );
    const closed = await startTestServer({ repositories: [l.repo], controlMode: 'explicit', loadModel: ['shared'] });
    try {
      const entry = ((await postJson(`${closed.httpUrl}/v2/repository/index`, {})).json() as { name: string; state?: string; reason?: string }[]).find((e) => e.name === 'shared');
      assert.equal(entry?.state, 'UNAVAILABLE');
      assert.match(entry?.reason ?? '', /default_model_filename '\.\.\/\.\.\/\.\.\/outside\/shared\.mjs' resolves outside the model directory.*allow_files_outside_model_dir/);
    } finally {
      await closed.close();
    }
    const open = await startHerd(
      herdConfigSchema.parse({
        server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0 },
        serving: { model_repository: [l.repo], model_control_mode: 'explicit', load_model: ['shared'], allow_files_outside_model_dir: true },
      }),
    );
    try {
      assert.equal((await request(`${open.httpUrl}/v2/models/shared/ready`)).status, 200);
      const config = JSON.stringify({ name: 'jsm', backend: 'js', ...IO, default_model_filename: '../../../outside/evil.mjs' });
      const res = await postJson(`${open.httpUrl}/v2/repository/models/jsm/load`, { parameters: { config } });
      assert.equal(res.status, 400);
      assert.match((res.json() as { error: string }).error, /default_model_filename '\.\.\/\.\.\/\.\.\/outside\/evil\.mjs' resolves outside the model directory/);
      assert.deepEqual(readdirSync(l.markers), []);
    } finally {
      await open.close();
      rmSync(l.root, { recursive: true, force: true });
    }
  });
});
