// The hand-written ModelInferRequest decoder and ModelInferResponse encoder against proto-loader's codecs for the
// same messages: what one writes the other reads back, field for field (raw contents as views, int64 exact).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import { decodeModelInferRequest } from '../../src/grpc/decode-model-infer-request.ts';
import { encodeModelInferResponse, encodeModelStreamInferResponse } from '../../src/grpc/encode-model-infer-response.ts';
import type { ModelInferResponseMessage } from '../../src/grpc/grpc-messages.ts';
import { loadGrpcProtos } from '../../src/grpc/load-grpc-protos.ts';
import { UndecodableMessage } from '../../src/grpc/protobuf-reader.ts';

const service = loadGrpcProtos()['inference.GRPCInferenceService'] as ServiceDefinition;
const infer = service['ModelInfer'] as MethodDefinition<object, object>;
const stream = service['ModelStreamInfer'] as MethodDefinition<object, object>;

/** proto-loader's decoding with `defaults` fills every field; compare what both decoders say. */
function normalise(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (_k, v: unknown) => (v instanceof Uint8Array || (v as { type?: string })?.type === 'Buffer' ? Buffer.from(v as Uint8Array).toString('hex') : v)),
  );
}

test('a request proto-loader writes decodes to what proto-loader reads, raw contents as views into the message', () => {
  const raw0 = Buffer.from(Int32Array.from([1, 2, 3, 4]).buffer);
  const message = infer.requestSerialize({
    model_name: 'simple',
    model_version: '3',
    id: 'req-é',
    parameters: {
      sequence_id: { int64_param: '9007199254740993' },
      neg: { int64_param: '-5' },
      big: { uint64_param: '18446744073709551615' },
      flag: { bool_param: false },
      text: { string_param: '' },
      ratio: { double_param: 0.25 },
    },
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 4] },
      { name: 'INPUT1', datatype: 'INT32', shape: ['1', '4'], parameters: { shared_memory_region: { string_param: 'r' }, shared_memory_byte_size: { int64_param: 16 } } },
    ],
    outputs: [{ name: 'OUTPUT0', parameters: { classification: { int64_param: 2 } } }, { name: 'OUTPUT1' }],
    raw_input_contents: [raw0],
  });
  const mine = decodeModelInferRequest(message);
  assert.ok(mine);
  const theirs = infer.requestDeserialize(message) as Record<string, unknown>;
  const shape = (m: { inputs: { shape: (string | number)[] }[] }) => m.inputs.map((i) => i.shape.map(Number));
  assert.deepEqual(shape(mine), shape(theirs as never));
  const strip = (m: unknown) => {
    const copy = normalise(m) as { inputs: { shape?: unknown; contents?: unknown }[]; parameters: Record<string, Record<string, unknown>> };
    for (const input of copy.inputs) {
      delete input.shape;
      delete input.contents;
    }
    // proto-loader fills every oneof member with its default; only the chosen one is Herd's to read.
    for (const map of [copy.parameters, ...copy.inputs.map((i) => (i as { parameters: Record<string, Record<string, unknown>> }).parameters)]) {
      for (const [key, p] of Object.entries(map)) map[key] = { parameter_choice: p['parameter_choice'], [p['parameter_choice'] as string]: p[p['parameter_choice'] as string] };
    }
    return copy;
  };
  const outputs = (m: unknown) => (strip(m) as unknown as { outputs: { parameters: Record<string, unknown> }[] }).outputs;
  assert.deepEqual({ ...strip(mine), outputs: undefined }, { ...strip(theirs), outputs: undefined });
  assert.deepEqual(outputs(mine)[0]?.parameters, outputs(theirs)[0]?.parameters);
  assert.equal(mine.raw_input_contents[0]?.buffer, message.buffer, 'a view, not a copy');
});

test('typed contents are left to proto-loader; a broken message is undecodable, never a crash', () => {
  const typed = infer.requestSerialize({ model_name: 'm', inputs: [{ name: 'X', datatype: 'INT32', shape: [1], contents: { int_contents: [1] } }] });
  assert.equal(decodeModelInferRequest(typed), undefined);
  for (const bytes of [
    [0x0a, 0x0a, 0x61, 0x62],
    [0x0f, 0x01],
    [0x2a, 0x05, 0x0a],
    [0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    [0x22, 0x04, 0x0a, 0x02, 0x49, 0x4e],
  ]) {
    assert.throws(() => decodeModelInferRequest(Buffer.from(bytes)), UndecodableMessage, String(bytes));
  }
});

test('a response encodes once into a framed message proto-loader reads back, bare and inside a stream response', () => {
  const response: ModelInferResponseMessage = {
    model_name: 'simple',
    model_version: '1',
    id: 'ü-1',
    parameters: { triton_final_response: { bool_param: false }, count: { int64_param: -3 }, text: { string_param: 'x' }, ratio: { double_param: 1.5 } },
    outputs: [
      { name: 'OUTPUT0', datatype: 'INT32', shape: [1, 4] },
      { name: 'EMPTY', datatype: 'FP32', shape: [0] },
    ],
    raw_output_contents: [Buffer.from(Int32Array.from([5, 6, 7, 8]).buffer), new Uint8Array(0)],
  };
  const frame = encodeModelInferResponse(response);
  assert.equal(frame[0], 0);
  assert.equal(frame.readUInt32BE(1), frame.length - 5);
  const back = infer.responseDeserialize(frame.subarray(5)) as Record<string, unknown>;
  const expected = {
    ...response,
    outputs: response.outputs.map((o) => ({ ...o, shape: o.shape.map(String) })),
    raw_output_contents: response.raw_output_contents.map((r) => Buffer.from(r).toString('hex')),
  };
  const got = normalise(back) as typeof expected & { outputs: { name: string; datatype: string; shape: string[] }[] };
  assert.deepEqual(
    got.outputs.map((o) => ({ name: o.name, datatype: o.datatype, shape: o.shape })),
    expected.outputs,
  );
  assert.deepEqual(got.raw_output_contents, expected.raw_output_contents);
  assert.deepEqual([got.model_name, got.model_version, got.id], ['simple', '1', 'ü-1']);
  const params = got.parameters as unknown as Record<string, Record<string, unknown>>;
  assert.deepEqual(Object.fromEntries(Object.entries(params).map(([k, p]) => [k, p[p['parameter_choice'] as string]])), {
    triton_final_response: false,
    count: '-3',
    text: 'x',
    ratio: 1.5,
  });

  const streamed = encodeModelStreamInferResponse({ error_message: 'bad ✗', infer_response: response });
  const streamBack = stream.responseDeserialize(streamed.subarray(5)) as { error_message: string; infer_response: { id: string } };
  assert.equal(streamBack.error_message, 'bad ✗');
  assert.equal(streamBack.infer_response.id, 'ü-1');
});
