// GET /config bodies byte-for-byte as Triton prints them, including Triton's 64-bit-integer quirks.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { convertModelConfigToJson } from '../../../src/serving/model-config/convert-model-config-to-json.ts';
import { parsePbtxtModelConfig } from '../../../src/serving/model-config/parse-model-config.ts';

const render = (text: string, name = 'm') => JSON.stringify(convertModelConfigToJson(parsePbtxtModelConfig(text, 'config.pbtxt', name)));

describe('convertModelConfigToJson', () => {
  it('prints densenet_onnx exactly as Triton 25.12 does (GET /v2/models/densenet_onnx/config)', () => {
    const triton =
      '{"name":"densenet_onnx","platform":"onnxruntime_onnx","backend":"onnxruntime","runtime":"","version_policy":{"latest":{"num_versions":1}},"max_batch_size":0,"input":[{"name":"data_0","data_type":"TYPE_FP32","format":"FORMAT_NONE","dims":[1,3,224,224],"is_shape_tensor":false,"allow_ragged_batch":false,"optional":false,"is_non_linear_format_io":false}],"output":[{"name":"fc6_1","data_type":"TYPE_FP32","dims":[1,1000,1,1],"label_filename":"","is_shape_tensor":false,"is_non_linear_format_io":false}],"batch_input":[],"batch_output":[],"optimization":{"priority":"PRIORITY_DEFAULT","input_pinned_memory":{"enable":true},"output_pinned_memory":{"enable":true},"gather_kernel_buffer_threshold":0,"eager_batching":false},"instance_group":[{"name":"densenet_onnx","kind":"KIND_CPU","count":2,"gpus":[],"secondary_devices":[],"profile":[],"passive":false,"host_policy":""}],"default_model_filename":"model.onnx","cc_model_filenames":{},"metric_tags":{},"parameters":{},"model_warmup":[]}';
    const pbtxt = `name: "densenet_onnx" platform: "onnxruntime_onnx" max_batch_size: 0
      input [{ name: "data_0" data_type: TYPE_FP32 dims: [1, 3, 224, 224] }]
      output [{ name: "fc6_1" data_type: TYPE_FP32 dims: [1, 1000, 1, 1] }]`;
    assert.equal(render(pbtxt, 'densenet_onnx'), triton);
  });

  it('prints the dynamic batcher as Triton does: filled preferred size, no default_queue_policy unless written', () => {
    const json = render('backend: "onnxruntime" max_batch_size: 4 input [{ name: "images" data_type: TYPE_FP32 dims: [3, -1, -1] }] dynamic_batching {}');
    assert.ok(
      json.includes(
        '"eager_batching":false},"dynamic_batching":{"preferred_batch_size":[4],"max_queue_delay_microseconds":0,"preserve_ordering":false,"priority_levels":0,"default_priority_level":0,"priority_queue_policy":{}},"instance_group":[{"name":"m","kind":"KIND_CPU","count":2,',
      ),
      json,
    );
  });

  it('prints sequence batching in proto declaration order, the strategy first', () => {
    const json = render(
      'backend: "js" max_batch_size: 2 sequence_batching { max_sequence_idle_microseconds: 5 direct { max_queue_delay_microseconds: 7 minimum_slot_utilization: 0.1 } }',
    );
    assert.ok(
      json.includes(
        '"sequence_batching":{"direct":{"max_queue_delay_microseconds":7,"minimum_slot_utilization":0.1},"max_sequence_idle_microseconds":5,"control_input":[],"state":[],"iterative_sequence":false}',
      ),
      json,
    );
  });

  it('prints 64-bit integers as numbers where Triton fixes them and as strings where it does not', () => {
    const config = parsePbtxtModelConfig(
      `backend: "js" max_batch_size: 2
      version_policy { specific { versions: [2] } }
      input [{ name: "a" data_type: TYPE_FP32 dims: [4] reshape { shape: [2, 2] } }]
      optimization { cuda { graph_spec [{ input { key: "a" value { dim: [4] } } graph_lower_bound { input { key: "a" value { dim: [1] } } } }] } }
      sequence_batching {
        oldest { max_queue_delay_microseconds: 3 }
        state [{ input_name: "i" output_name: "o" data_type: TYPE_FP32 dims: [5] initial_state [{ data_type: TYPE_FP32 dims: [5] zero_data: true }] }]
      }
      instance_group [{ secondary_devices [{ kind: KIND_NVDLA device_id: 1 }] }]
      model_warmup [{ name: "w" batch_size: 1 inputs { key: "a" value { data_type: TYPE_FP32 dims: [4] zero_data: true } } }]`,
      'config.pbtxt',
      'm',
    );
    const json = convertModelConfigToJson(config);
    const text = JSON.stringify(json);
    assert.ok(text.includes('"version_policy":{"specific":{"versions":[2]}}'));
    assert.ok(text.includes('"dims":[4],"reshape":{"shape":[2,2]}'));
    assert.ok(
      text.includes(
        '"oldest":{"max_candidate_sequences":0,"preferred_batch_size":[2],"max_queue_delay_microseconds":3,"preserve_ordering":false},"max_sequence_idle_microseconds":1000000',
      ),
    );
    assert.ok(text.includes('"dims":[5],"initial_state":[{"data_type":"TYPE_FP32","dims":["5"],"zero_data":true,"name":""}]'), text);
    assert.ok(text.includes('"graph_spec":[{"batch_size":0,"input":{"a":{"dim":["4"]}},"graph_lower_bound":{"batch_size":0,"input":{"a":{"dim":["1"]}}}}]'), text);
    assert.ok(text.includes('"secondary_devices":[{"kind":"KIND_NVDLA","device_id":"1"}]'), text);
    assert.ok(text.includes('"inputs":{"a":{"data_type":"TYPE_FP32","dims":[4],"zero_data":true}}'), text);
  });

  it('prints maps as objects, parameters as string_value objects, and non-finite floats as protobuf strings', () => {
    const json = render(`backend: "js" max_batch_size: 1
      parameters { key: "k" value { string_value: "v" } } metric_tags { key: "t" value: "x" }
      sequence_batching { control_input [{ name: "S" control [{ kind: CONTROL_SEQUENCE_START fp32_false_true: [-inf, nan] }] }] }`);
    assert.ok(json.includes('"fp32_false_true":["-Infinity","NaN"]'), json);
    assert.ok(json.includes('"metric_tags":{"t":"x"},"parameters":{"k":{"string_value":"v"}}'), json);
  });

  it('prints ensembles without optimization or instance groups, and model_version as a number', () => {
    const json = render(`platform: "ensemble"
      input [{ name: "IN" data_type: TYPE_FP32 dims: [1] }] output [{ name: "OUT" data_type: TYPE_FP32 dims: [1] }]
      ensemble_scheduling { step [{ model_name: "a" model_version: -1 input_map { key: "x" value: "IN" } output_map { key: "y" value: "OUT" } }] }`);
    assert.ok(
      json.includes(
        '"batch_output":[],"ensemble_scheduling":{"step":[{"model_name":"a","model_version":-1,"input_map":{"x":"IN"},"output_map":{"y":"OUT"},"model_namespace":""}],"max_inflight_requests":0},"instance_group":[],',
      ),
      json,
    );
    assert.ok(!json.includes('"optimization"'));
  });

  it('prints zero values for scalars a hand-built config leaves out', () => {
    const config = parsePbtxtModelConfig('backend: "js"', 'config.pbtxt', 'm');
    // A backend auto-complete might push a partial input; Triton would print every field of it.
    (config.input as unknown[]).push({ name: 'x', data_type: 'TYPE_FP32', dims: [1] });
    assert.deepEqual(convertModelConfigToJson(config).input, [
      {
        name: 'x',
        data_type: 'TYPE_FP32',
        format: 'FORMAT_NONE',
        dims: [1],
        is_shape_tensor: false,
        allow_ragged_batch: false,
        optional: false,
        is_non_linear_format_io: false,
      },
    ]);
  });
});
