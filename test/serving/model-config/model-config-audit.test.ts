// The audit of config.pbtxt fields: every ModelConfig field has a row in docs/serving.md, each field Herd
// refuses fails the load with its file:line:column, each ignored one is warned about in the load log,
// and Triton's normalized defaults (pinned memory on, a 1 s sequence idle time) warn about nothing.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsBackend } from '../../../src/serving/backends/js/js-backend.ts';
import { IGNORED_FIELDS, REFUSED_FIELDS, listIgnoredFields } from '../../../src/serving/model-config/audit-model-config.ts';
import type { MessageSchema } from '../../../src/serving/model-config/message-schema.ts';
import { ModelConfigSchema } from '../../../src/serving/model-config/model-config-schema.ts';
import { ModelRepositoryManager } from '../../../src/serving/repository/model-repository-manager.ts';
import { parsePbtxtModelConfig } from '../../../src/serving/model-config/parse-model-config.ts';

const BASE = [
  'name: "m"',
  'backend: "js"',
  'max_batch_size: 4',
  'input [ { name: "IN" data_type: TYPE_FP32 dims: [ 1 ] } ]',
  'output [ { name: "OUT" data_type: TYPE_FP32 dims: [ 1 ] } ]',
].join('\n');

/** A snippet setting each refused field (appended to BASE, so its line is 6). */
const REFUSED_SNIPPETS: Record<string, string> = {
  batch_input: 'batch_input [ { kind: BATCH_ELEMENT_COUNT target_name: "N" data_type: TYPE_FP32 source_input: "IN" } ]',
  batch_output: 'batch_output [ { target_name: "OUT" kind: BATCH_SCATTER_WITH_INPUT_SHAPE source_input: "IN" } ]',
  'optimization.cuda.graphs': 'optimization { cuda { graphs: true } }',
  'optimization.cuda.graph_spec': 'optimization { cuda { graph_spec [ { batch_size: 1 } ] } }',
  'optimization.cuda.busy_wait_events': 'optimization { cuda { busy_wait_events: true } }',
  'optimization.cuda.output_copy_stream': 'optimization { cuda { output_copy_stream: true } }',
  'optimization.execution_accelerators.gpu_execution_accelerator': 'optimization { execution_accelerators { gpu_execution_accelerator [ { name: "tensorrt" } ] } }',
  'optimization.execution_accelerators.cpu_execution_accelerator': 'optimization { execution_accelerators { cpu_execution_accelerator [ { name: "openvino" } ] } }',
  'instance_group.secondary_devices': 'instance_group [ { kind: KIND_CPU secondary_devices [ { kind: KIND_NVDLA device_id: 0 } ] } ]',
  'model_operations.op_library_filename': 'model_operations { op_library_filename: "libcustom.so" }',
  'model_repository_agents.agents': 'model_repository_agents { agents [ { name: "checksum" } ] }',
  'sequence_batching.state': 'sequence_batching { state [ { input_name: "S_IN" output_name: "S_OUT" data_type: TYPE_FP32 dims: [ 1 ] } ] }',
  'sequence_batching.iterative_sequence': 'sequence_batching { iterative_sequence: true }',
};

const IGNORED_SNIPPETS: Record<string, string> = {
  runtime: 'runtime: "libtriton_custom.so"',
  'optimization.priority': 'optimization { priority: PRIORITY_MAX }',
  'optimization.input_pinned_memory.enable': 'optimization { input_pinned_memory { enable: false } }',
  'optimization.output_pinned_memory.enable': 'optimization { output_pinned_memory { enable: false } }',
  'optimization.gather_kernel_buffer_threshold': 'optimization { gather_kernel_buffer_threshold: 4 }',
  'optimization.eager_batching': 'optimization { eager_batching: true }',
  'optimization.graph.level': 'optimization { graph { level: 1 } }',
  'instance_group.host_policy': 'instance_group [ { kind: KIND_CPU host_policy: "numa0" } ]',
  cc_model_filenames: 'cc_model_filenames { key: "7.5" value: "model.plan" }',
  'model_metrics.metric_control':
    'model_metrics { metric_control [ { metric_identifier { family: "nv_inference_first_response_histogram_ms" } histogram_options { buckets: [ 1, 10 ] } } ] }',
  'sequence_batching.direct': 'sequence_batching { direct { } }',
  'sequence_batching.oldest': 'sequence_batching { oldest { max_candidate_sequences: 4 } }',
  'sequence_batching.max_sequence_idle_microseconds': 'sequence_batching { max_sequence_idle_microseconds: 5000 }',
};

const parse = (text: string) => parsePbtxtModelConfig(text, '/repo/m/config.pbtxt', 'm', { refuseUnhonoured: true });

/** Every field path of ModelConfig, nested messages included (`optimization.cuda.graphs`). */
function schemaPaths(schema: MessageSchema, prefix = '', seen = new Set<string>()): string[] {
  return schema.fields.flatMap((field) => {
    const path = prefix ? `${prefix}.${field.name}` : field.name;
    if (field.type.kind !== 'message' || seen.has(field.type.message.name)) return [path];
    return [path, ...schemaPaths(field.type.message, path, new Set([...seen, field.type.message.name]))];
  });
}

interface DocRow {
  paths: string[];
  state: string;
}

function docRows(): DocRow[] {
  const text = readFileSync('docs/serving.md', 'utf8');
  const section = text.split(/^## /m).find((s) => s.startsWith('Model configuration fields'));
  assert.ok(section, 'docs/serving.md has a "## Model configuration fields" section');
  return section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .map((line) => {
      const [first = '', state = ''] = line
        .split('|')
        .slice(1)
        .map((c) => c.trim());
      return { paths: [...first.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string), state };
    });
}

/** The row of `path`: its own (`path` or `path.*`), or the nearest `ancestor.*` row. */
function rowOf(rows: DocRow[], path: string): DocRow | undefined {
  const exact = rows.find((r) => r.paths.includes(path) || r.paths.includes(`${path}.*`));
  if (exact) return exact;
  const parts = path.split('.');
  for (let n = parts.length - 1; n >= 1; n--) {
    const wildcard = `${parts.slice(0, n).join('.')}.*`;
    const row = rows.find((r) => r.paths.includes(wildcard));
    if (row) return row;
  }
  return undefined;
}

describe('docs/serving.md model configuration table', () => {
  const rows = docRows();

  it('has a row for every ModelConfig field', () => {
    const missing = schemaPaths(ModelConfigSchema).filter((p) => rowOf(rows, p) === undefined);
    assert.deepEqual(missing, [], `fields with no row in docs/serving.md: ${missing.join(', ')}`);
  });

  it('states every refused and ignored field as the code treats it', () => {
    for (const rule of REFUSED_FIELDS) assert.equal(rowOf(rows, rule.path)?.state, 'refused', rule.path);
    for (const rule of IGNORED_FIELDS) {
      // A backend-specific rule (graph.level for js models) sits in the row of a field honoured elsewhere.
      if (rule.when) continue;
      assert.equal(rowOf(rows, rule.path)?.state, 'ignored (warned)', rule.path);
    }
  });

  it('names only states it defines', () => {
    for (const row of rows) assert.ok(['honoured', 'validated', 'refused', 'ignored (warned)'].includes(row.state), `${row.paths.join(', ')}: ${row.state}`);
  });
});

describe('refused fields', () => {
  it('has a test snippet for every refused field', () => {
    assert.deepEqual(Object.keys(REFUSED_SNIPPETS).sort(), REFUSED_FIELDS.map((r) => r.path).sort());
  });

  for (const rule of REFUSED_FIELDS) {
    it(`${rule.path} fails the load at its file:line:column with the reason`, () => {
      const snippet = REFUSED_SNIPPETS[rule.path] as string;
      assert.throws(
        () => parse(`${BASE}\n${snippet}\n`),
        (err: Error) => {
          assert.match(err.message, /^\/repo\/m\/config\.pbtxt:6:\d+: /);
          assert.ok(err.message.includes(`'${rule.path}' is set but ${rule.reason}`), err.message);
          return true;
        },
      );
      // Plain parsing (GET /config, herd check) keeps the field.
      assert.doesNotThrow(() => parsePbtxtModelConfig(`${BASE}\n${snippet}\n`, '/repo/m/config.pbtxt', 'm'));
    });
  }

  it('a metric tag that cannot be a Prometheus label is refused', () => {
    assert.throws(() => parse(`${BASE}\nmetric_tags { key: "my-team" value: "x" }\n`), /config\.pbtxt:6:\d+: .*metric tag 'my-team'/);
    assert.doesNotThrow(() => parse(`${BASE}\nmetric_tags { key: "team_1" value: "x" }\n`));
  });
});

describe('ignored fields', () => {
  it('has a test snippet for every ignored field', () => {
    assert.deepEqual(Object.keys(IGNORED_SNIPPETS).sort(), IGNORED_FIELDS.map((r) => r.path).sort());
  });

  for (const rule of IGNORED_FIELDS) {
    it(`${rule.path} loads with a warning`, () => {
      const config = parse(`${BASE}\n${IGNORED_SNIPPETS[rule.path]}\n`);
      const warnings = listIgnoredFields(config, { hasResponseCache: true });
      assert.deepEqual(
        warnings.map((w) => w.path),
        [rule.path],
      );
    });
  }

  it("Triton's normalized defaults and an unremarkable config warn about nothing", () => {
    assert.deepEqual(listIgnoredFields(parse(`${BASE}\n`), { hasResponseCache: false }), []);
    // Pinned memory normalizes to enable: true; the sequence idle time to 1 s; graph levels are ONNX's.
    const onnxish = parse(
      `${BASE.replace('backend: "js"', 'backend: "onnxruntime"')}\noptimization { graph { level: 1 } input_pinned_memory { enable: true } }\nsequence_batching { }\n`,
    );
    assert.deepEqual(listIgnoredFields(onnxish, { hasResponseCache: false }), []);
  });
});

describe('at load through the repository manager', () => {
  const MODEL = `export default class Kind {
  initialize(args) { this.kind = args.model_instance_kind; this.herd = args.herd; }
  execute(requests) { return requests.map((r) => ({ outputs: [this.herd.createTensor('OUT', 'FP32', r.input('IN').shape, Float32Array.from(r.input('IN').data))] })); }
}
`;

  // OUT = the instance group index of the instance that ran the request (names are <model>_<group>_<i>).
  const GROUP_MODEL = `export default class Group {
  initialize(args) { this.group = Number(args.model_instance_name.split('_').at(-2)); this.herd = args.herd; }
  execute(requests) { return requests.map((r) => ({ outputs: [this.herd.createTensor('OUT', 'FP32', r.input('IN').shape, new Float32Array(r.input('IN').data.length).fill(this.group))] })); }
}
`;

  function repository(models: Record<string, string>, files: Record<string, string> = {}): string {
    const dir = mkdtempSync(join(tmpdir(), 'herd-audit-'));
    for (const [name, extra] of Object.entries(models)) {
      mkdirSync(join(dir, name, '1'), { recursive: true });
      writeFileSync(join(dir, name, 'config.pbtxt'), `${BASE.replace('"m"', `"${name}"`)}\n${extra}\n`);
      writeFileSync(join(dir, name, '1', 'model.mjs'), files[name] ?? MODEL);
    }
    return dir;
  }

  it('passive instances are loaded and never given requests; passive only is refused', async () => {
    const dir = repository(
      {
        with_passive: 'instance_group [ { kind: KIND_CPU count: 1 }, { kind: KIND_CPU count: 2 passive: true } ]',
        only_passive: 'instance_group [ { kind: KIND_CPU count: 1 passive: true } ]',
      },
      { with_passive: GROUP_MODEL },
    );
    const manager = new ModelRepositoryManager({ repositories: [dir], controlMode: 'none', backends: new Map([['js', jsBackend]]) });
    try {
      await manager.start([]);
      const summary = Object.fromEntries(manager.summary().map((s) => [s.name, s]));
      assert.equal(summary['only_passive']?.state, 'UNAVAILABLE');
      assert.match(summary['only_passive']?.reason ?? '', /only passive instances/);
      const model = manager.get('with_passive');
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          model.scheduler.submit({
            id: String(i),
            modelName: 'with_passive',
            modelVersion: 1,
            requestedOutputs: [],
            parameters: {},
            inputs: [{ name: 'IN', datatype: 'FP32', shape: [1, 1], data: Float32Array.from([i]) }],
          }),
        ),
      );
      assert.deepEqual(
        results.map((r) => (r.ok ? [...((r.outputs[0]?.data as Float32Array | undefined) ?? [])] : r.error.message)),
        Array.from({ length: 6 }, () => [0]),
      );
    } finally {
      await manager.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a refused field leaves the model UNAVAILABLE with file:line:column; an ignored one is logged; KIND_MODEL loads', async () => {
    const dir = repository({
      cuda: 'optimization { cuda { graphs: true } }',
      pinned: 'optimization { output_pinned_memory { enable: false } }',
      kind_model: 'instance_group [ { kind: KIND_MODEL count: 1 } ]',
      cached: 'response_cache { enable: true }',
    });
    const log: string[] = [];
    const manager = new ModelRepositoryManager({ repositories: [dir], controlMode: 'none', backends: new Map([['js', jsBackend]]), onWarning: (l) => log.push(`warning: ${l}`) });
    try {
      await manager.start([]);
      const summary = Object.fromEntries(manager.summary().map((s) => [s.name, s]));
      assert.equal(summary['cuda']?.state, 'UNAVAILABLE');
      assert.match(
        summary['cuda']?.reason ?? '',
        // Relative to the repository: reasons reach clients (the index, readiness), who need not know server paths.
        /^cuda\/config\.pbtxt:6:\d+: .*optimization\.cuda\.graphs.*need a GPU/,
      );
      assert.equal(summary['pinned']?.state, 'READY');
      assert.equal(summary['kind_model']?.state, 'READY');
      assert.equal(summary['cached']?.state, 'READY');
      assert.ok(
        log.some((l) => l.startsWith("warning: model 'pinned': 'optimization.output_pinned_memory.enable' is set and ignored")),
        log.join('\n'),
      );
      assert.ok(
        log.some((l) => l.startsWith("warning: model 'cached': 'response_cache.enable' is set but the server has no response cache")),
        log.join('\n'),
      );
      assert.equal(log.filter((l) => l.includes("model 'kind_model'")).length, 0);
    } finally {
      await manager.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
