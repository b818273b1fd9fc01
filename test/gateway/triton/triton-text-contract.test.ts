// The text contract read from model metadata, the request tensors it implies, and the decoding of
// text_output, finish_reason and token counts back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { InferencePortModel } from '../../../src/core/inference-port.ts';
import { UpstreamError } from '../../../src/gateway/protocol/upstream-error.ts';
import { createTextRequest, decodeTextOutput, mapTritonFinishReason, readTextContract } from '../../../src/gateway/providers/triton/triton-text-contract.ts';
import { parseUpstreamModel } from '../../../src/gateway/providers/triton/triton-provider.ts';

const vllm: InferencePortModel = {
  name: 'vllm_model',
  versions: [1],
  inputs: [
    { name: 'text_input', datatype: 'BYTES', shape: [1] },
    { name: 'stream', datatype: 'BOOL', shape: [1] },
    { name: 'sampling_parameters', datatype: 'BYTES', shape: [1] },
    { name: 'exclude_input_in_output', datatype: 'BOOL', shape: [1] },
    { name: 'return_finish_reason', datatype: 'BOOL', shape: [1] },
    { name: 'return_num_output_tokens', datatype: 'BOOL', shape: [1] },
  ],
  outputs: [
    { name: 'text_output', datatype: 'BYTES', shape: [-1] },
    { name: 'finish_reason', datatype: 'BYTES', shape: [-1] },
    { name: 'num_output_tokens', datatype: 'UINT32', shape: [-1] },
  ],
  maxBatchSize: 0,
  decoupled: true,
  parameters: {},
};

const utf8 = new TextDecoder();
const text = (bytes: unknown) => utf8.decode((bytes as Uint8Array[])[0]);

test('a vLLM-shaped model: every input it has is sent, sampling settings as vLLM JSON, unsupported ones warned', () => {
  const contract = readTextContract('local', vllm);
  assert.deepEqual(contract.outputs, { finishReason: true, inputTokens: false, outputTokens: true });
  const req = createTextRequest(
    contract,
    'PROMPT',
    { model: 'x', messages: [], max_completion_tokens: 7, max_tokens: 99, temperature: 0.5, stop: 'END', seed: 3, tools: [{ type: 'function', function: { name: 'f' } }] },
    true,
    'local',
  );
  const byName = new Map(req.inputs.map((t) => [t.name, t]));
  assert.deepEqual([...byName.keys()], ['text_input', 'stream', 'exclude_input_in_output', 'return_finish_reason', 'return_num_output_tokens', 'sampling_parameters']);
  assert.equal(text(byName.get('text_input')?.data), 'PROMPT');
  assert.deepEqual(byName.get('stream')?.data, Uint8Array.of(1));
  assert.deepEqual(byName.get('exclude_input_in_output')?.data, Uint8Array.of(1));
  assert.deepEqual(JSON.parse(text(byName.get('sampling_parameters')?.data)), { max_tokens: 7, temperature: 0.5, stop: ['END'], seed: 3 });
  assert.deepEqual(req.outputs, ['text_output', 'finish_reason', 'num_output_tokens']);
  assert.deepEqual(
    req.warnings.map((w) => w.param),
    ['tools'],
  );
});

test('a bare model: a batch dimension becomes 1; sampling settings with nowhere to go are warnings', () => {
  const bare: InferencePortModel = {
    ...vllm,
    inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [-1, 1] }],
    outputs: [{ name: 'text_output', datatype: 'BYTES', shape: [-1, 1] }],
    maxBatchSize: 8,
  };
  const req = createTextRequest(readTextContract('local', bare), 'p', { model: 'x', messages: [], temperature: 0 }, false, 'local');
  assert.deepEqual(
    req.inputs.map((t) => [t.name, t.shape]),
    [['text_input', [1, 1]]],
  );
  assert.deepEqual(req.warnings, [{ param: 'temperature', message: "local has no sampling_parameters input; 'temperature' was not sent" }]);
});

test('models without the contract are refused naming what is missing', () => {
  const refused = (model: InferencePortModel, message: RegExp) =>
    assert.throws(
      () => readTextContract('local', model),
      (err: unknown) => err instanceof UpstreamError && err.failure === 'invalid_request' && message.test(err.message),
    );
  refused({ ...vllm, inputs: [{ name: 'IN', datatype: 'INT32', shape: [1] }] }, /model 'vllm_model' cannot serve chat: it has no input text_input \(inputs: IN\)/);
  refused({ ...vllm, inputs: [{ name: 'text_input', datatype: 'INT32', shape: [1] }] }, /its input text_input is INT32/);
  refused({ ...vllm, inputs: [{ name: 'text_input', datatype: 'BYTES', shape: [2] }] }, /its input text_input has shape \[2\], not one element/);
  refused({ ...vllm, outputs: [{ name: 'OUT', datatype: 'FP32', shape: [1] }] }, /it has no output text_output \(outputs: OUT\)/);
});

test('decoding: text elements joined, empty or None reasons skipped, counts summed; vLLM reasons mapped', () => {
  const enc = new TextEncoder();
  const out = decodeTextOutput('local', 'm', {
    model: 'm',
    version: 1,
    outputs: [
      { name: 'text_output', datatype: 'BYTES', shape: [2], data: [enc.encode('a'), enc.encode('b')] },
      { name: 'finish_reason', datatype: 'BYTES', shape: [2], data: [enc.encode('None'), enc.encode('length')] },
      { name: 'num_output_tokens', datatype: 'UINT32', shape: [2], data: Uint32Array.of(1, 2) },
    ],
  });
  assert.deepEqual(out, { text: 'ab', finishReason: 'length', inputTokens: undefined, outputTokens: 3 });
  assert.throws(
    () => decodeTextOutput('local', 'm', { model: 'm', version: 1, outputs: [{ name: 'text_output', datatype: 'FP32', shape: [1], data: Float32Array.of(1) }] }),
    (err: unknown) => err instanceof UpstreamError && err.failure === 'malformed',
  );
  assert.deepEqual(['length', 'stop', 'abort', undefined].map(mapTritonFinishReason), ['length', 'stop', 'stop', 'stop']);
});

test('upstream_model: name or name:version', () => {
  assert.deepEqual(parseUpstreamModel('echo_llm'), { model: 'echo_llm', version: undefined });
  assert.deepEqual(parseUpstreamModel('echo_llm:3'), { model: 'echo_llm', version: 3 });
  assert.deepEqual(parseUpstreamModel('a:b'), { model: 'a:b', version: undefined });
});
