// Ensembles over HTTP: Triton's scheduling (steps as soon as their inputs exist, independent steps at
// the same time, each through its own model's scheduler), statistics and metrics, step failures, and
// Triton's load-time validation with file:line:column.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, request, startTestServer } from '../../e2e/start-test-server.ts';
import { DIAMOND_ENSEMBLE, diamondModels, int32Model, writeRepository, type FixtureModel } from './ensemble-fixtures.ts';

const inferX = (url: string, model: string, x: number[]) =>
  postJson(`${url}/v2/models/${model}/infer`, { id: 'r1', inputs: [{ name: 'X', datatype: 'INT32', shape: [x.length], data: x }] });

test('a diamond ensemble: both branches run at once, the join step gets both, outputs keep the ensemble names', async () => {
  const server = await startTestServer({ repositories: [writeRepository(diamondModels())] });
  try {
    const res = await inferX(server.httpUrl, 'diamond', [1, 2, 3]);
    assert.equal(res.status, 200, res.body.toString());
    assert.deepEqual(res.json(), {
      id: 'r1',
      model_name: 'diamond',
      model_version: '1',
      outputs: [{ name: 'Y', datatype: 'INT32', shape: [3], data: [4, 7, 10] }],
    });

    const stats = (await request(`${server.httpUrl}/v2/models/stats`)).json() as {
      model_stats: { name: string; inference_count: number; execution_count: number; inference_stats: { success: { count: number }; queue: { count: number; ns: number } } }[];
    };
    const byName = new Map(stats.model_stats.map((s) => [s.name, s]));
    for (const name of ['diamond', 'double', 'add_one', 'sum']) {
      assert.equal(byName.get(name)?.inference_stats.success.count, 1, `${name} counts the request once`);
      assert.equal(byName.get(name)?.execution_count, 1, name);
    }
    assert.equal(byName.get('diamond')?.inference_stats.queue.ns, 0, 'an ensemble has no queue of its own');

    const metrics = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    assert.match(metrics, /nv_inference_request_success\{model="diamond",version="1"\} 1/);
    assert.match(metrics, /nv_inference_request_success\{model="sum",version="1"\} 1/);
  } finally {
    await server.close();
  }
});

test('a failing step fails the ensemble with an error that names the ensemble and the step; others keep serving', async () => {
  const server = await startTestServer({ repositories: [writeRepository(diamondModels())] });
  try {
    // The barrier pairs the two branches: send the failing value through both.
    const res = await inferX(server.httpUrl, 'diamond', [-999]);
    assert.equal(res.status, 400);
    const message = (res.json() as { error: string }).error;
    assert.match(message, /^in ensemble 'diamond', step '(double|add_one)': the model refuses -999$/);
    const ok = await inferX(server.httpUrl, 'diamond', [0]);
    assert.equal(ok.status, 200, ok.body.toString());
    const stats = (await request(`${server.httpUrl}/v2/models/diamond/stats`)).json() as {
      model_stats: { inference_stats: { fail: { count: number }; success: { count: number } } }[];
    };
    assert.equal(stats.model_stats[0]?.inference_stats.fail.count, 1);
    assert.equal(stats.model_stats[0]?.inference_stats.success.count, 1);
  } finally {
    await server.close();
  }
});

test('an ensemble loads after its steps whatever the scan order, and a chain of ensembles works', async () => {
  const models: Record<string, FixtureModel> = {
    ...diamondModels(),
    // "a_outer" sorts before "diamond": it must wait for the inner ensemble's load.
    a_outer: {
      config:
        `name: "a_outer"\nplatform: "ensemble"\ninput [ { name: "X" data_type: TYPE_INT32 dims: [ -1 ] } ]\noutput [ { name: "Z" data_type: TYPE_INT32 dims: [ -1 ] } ]\n` +
        `ensemble_scheduling { step [ { model_name: "diamond" model_version: -1 input_map { key: "X" value: "X" } output_map { key: "Y" value: "y" } },\n` +
        `  { model_name: "add_one" model_version: -1 input_map { key: "IN" value: "y" } output_map { key: "OUT" value: "Z" } } ] }\n`,
    },
  };
  // add_one waits for a partner at the barrier; give the outer step a model of its own instead.
  models['add_one'] = int32Model('add_one', 'x + 1');
  models['double'] = int32Model('double', 'x * 2');
  const server = await startTestServer({ repositories: [writeRepository(models)] });
  try {
    const res = await inferX(server.httpUrl, 'a_outer', [5]);
    assert.equal(res.status, 200, res.body.toString());
    assert.deepEqual((res.json() as { outputs: { data: number[] }[] }).outputs[0]?.data, [5 * 2 + 5 + 1 + 1]);
  } finally {
    await server.close();
  }
});

async function loadReason(models: Record<string, FixtureModel>, name: string): Promise<string> {
  const server = await startTestServer({ repositories: [writeRepository(models)], strictReadiness: false });
  try {
    const index = (await postJson(`${server.httpUrl}/v2/repository/index`, {})).json() as { name: string; state?: string; reason?: string }[];
    const entry = index.find((e) => e.name === name);
    assert.equal(entry?.state, 'UNAVAILABLE', JSON.stringify(entry));
    return entry?.reason ?? '';
  } finally {
    await server.close();
  }
}

test('load-time validation: an unknown step model', async () => {
  const models = diamondModels();
  delete models['sum'];
  assert.equal(await loadReason(models, 'diamond'), 'ensemble diamond contains models that are not available or ambiguous: sum');
});

test('load-time validation: a step model that failed to load', async () => {
  const models = diamondModels();
  models['sum'] = { config: 'name: "sum"\nbackend: "js"\n', model: 'export default { execute() { return []; } };\nthrow new Error("broken on purpose");\n' };
  assert.match(
    await loadReason(models, 'diamond'),
    /^ensemble 'diamond' depends on 'sum' which has no loaded version\. Model 'sum' loading failed with error: .*broken on purpose/,
  );
});

test('load-time validation: a datatype mismatch, with the line and column of the mapping', async () => {
  const models = diamondModels();
  models['sum'] = {
    config: (models['sum'] as FixtureModel).config.replace('name: "B" data_type: TYPE_INT32', 'name: "B" data_type: TYPE_FP32'),
    model: (models['sum'] as FixtureModel).model,
  };
  const reason = await loadReason(models, 'diamond');
  assert.match(
    reason,
    /^diamond\/config\.pbtxt:10:87: in ensemble diamond, ensemble tensor plus_one: inconsistent data type: TYPE_INT32 is inferred from model add_one while TYPE_FP32 is inferred from model sum$/,
  );
});

test('load-time validation: a shape mismatch and a mapping to an input the model does not have', async () => {
  const shape = diamondModels();
  shape['sum'] = {
    config: (shape['sum'] as FixtureModel).config.replace('name: "B" data_type: TYPE_INT32 dims: [ -1 ]', 'name: "B" data_type: TYPE_INT32 dims: [ 2, 2 ]'),
    model: (shape['sum'] as FixtureModel).model,
  };
  assert.match(
    await loadReason(shape, 'diamond'),
    /: in ensemble diamond, ensemble tensor plus_one: inconsistent shape: \[-1\] is inferred from model add_one while \[2,2\] is inferred from model sum$/,
  );

  const wrongInput = diamondModels();
  wrongInput['diamond'] = { config: DIAMOND_ENSEMBLE.replace('{ key: "B" value: "plus_one" }', '{ key: "C" value: "plus_one" }') };
  assert.match(await loadReason(wrongInput, 'diamond'), /config\.pbtxt:10:87: in ensemble diamond, ensemble tensor plus_one is mapping to non-existing input C in model sum$/);
});

test('load-time validation: a required step input left unmapped, and a cycle between ensembles', async () => {
  const unmapped = diamondModels();
  unmapped['diamond'] = {
    config: DIAMOND_ENSEMBLE.replace(
      'input_map [ { key: "IN" value: "doubled" }, { key: "B" value: "plus_one" } ] output_map { key: "OUT" value: "Y" }',
      'input_map [ { key: "IN" value: "doubled" } ] output_map { key: "OUT" value: "Y" }',
    ),
  };
  // plus_one is then produced and never used: Triton's structural check says so first.
  assert.match(await loadReason(unmapped, 'diamond'), /ensemble tensor 'plus_one' is unused in ensemble 'diamond'/);

  const cyc = (name: string, other: string) => ({
    config:
      `name: "${name}"\nplatform: "ensemble"\ninput [ { name: "X" data_type: TYPE_INT32 dims: [ -1 ] } ]\noutput [ { name: "Y" data_type: TYPE_INT32 dims: [ -1 ] } ]\n` +
      `ensemble_scheduling { step [ { model_name: "${other}" model_version: -1 input_map { key: "X" value: "X" } output_map { key: "Y" value: "Y" } } ] }\n`,
  });
  const reason = await loadReason({ ens_a: cyc('ens_a', 'ens_b'), ens_b: cyc('ens_b', 'ens_a') }, 'ens_b');
  assert.equal(reason, 'circular dependency between ensembles: ens_a -> ... -> ens_b -> ens_a');
});

test('explicit mode: loading an ensemble loads its step models', async () => {
  const server = await startTestServer({ repositories: [writeRepository(diamondModels())], controlMode: 'explicit' });
  try {
    const load = await postJson(`${server.httpUrl}/v2/repository/models/diamond/load`, {});
    assert.equal(load.status, 200, load.body.toString());
    assert.equal((await request(`${server.httpUrl}/v2/models/sum/ready`)).status, 200);
    const res = await inferX(server.httpUrl, 'diamond', [2]);
    assert.equal(res.status, 200, res.body.toString());
  } finally {
    await server.close();
  }
});
