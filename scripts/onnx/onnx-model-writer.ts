// Builds ONNX ModelProto bytes from plain objects: typed helpers for value infos, initializers and nodes,
// encoded with protobufjs against the onnx.proto subset in onnx-schema.ts.
import { endianness } from 'node:os';
import { getModelProtoType, OnnxAttributeType, OnnxDataType, type OnnxDataTypeCode } from './onnx-schema.ts';

/** A fixed dim, or a symbolic one by name (written as dim_param, e.g. the batch dim). */
export type OnnxDim = number | string;

export interface OnnxValueInfo {
  name: string;
  type: { tensor_type: { elem_type: OnnxDataTypeCode; shape: { dim: ({ dim_value: number } | { dim_param: string })[] } } };
}

export interface OnnxTensorProto {
  name: string;
  dims: number[];
  data_type: OnnxDataTypeCode;
  raw_data: Uint8Array;
}

export interface OnnxAttribute {
  name: string;
  type: number;
  f?: number;
  i?: number;
  ints?: number[];
  floats?: number[];
}

export interface OnnxNode {
  name: string;
  op_type: string;
  input: string[];
  output: string[];
  attribute: OnnxAttribute[];
}

export interface OnnxGraphSpec {
  name: string;
  nodes: OnnxNode[];
  initializers: OnnxTensorProto[];
  inputs: OnnxValueInfo[];
  outputs: OnnxValueInfo[];
}

export interface OnnxModelSpec {
  graph: OnnxGraphSpec;
  /** Default-domain opset; 13 covers Gemm/Add/Sub/Relu with current semantics. */
  opsetVersion?: number;
  docString?: string;
}

// IR version 8 (ONNX 1.10) is old enough for any onnxruntime we might meet and new enough for opset 13+.
const IR_VERSION = 8;
const DEFAULT_OPSET = 13;

export function createValueInfo(name: string, elemType: OnnxDataTypeCode, dims: readonly OnnxDim[]): OnnxValueInfo {
  const dim = dims.map((d) => (typeof d === 'string' ? { dim_param: d } : { dim_value: d }));
  return { name, type: { tensor_type: { elem_type: elemType, shape: { dim } } } };
}

/** An FP32 initializer stored as raw little-endian bytes (the compact form ONNX Runtime maps directly). */
export function createFloatInitializer(name: string, dims: readonly number[], values: Float32Array): OnnxTensorProto {
  const expected = dims.reduce((a, b) => a * b, 1);
  if (values.length !== expected) throw new Error(`initializer ${name}: ${values.length} values for dims [${dims.join(', ')}]`);
  // raw_data must be little-endian; a typed array's bytes are host order, so refuse a big-endian host.
  if (endianness() !== 'LE') throw new Error('the ONNX writer needs a little-endian host');
  return {
    name,
    dims: [...dims],
    data_type: OnnxDataType.FLOAT,
    raw_data: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
  };
}

export function createNode(opType: string, inputs: string[], outputs: string[], attributes: OnnxAttribute[] = []): OnnxNode {
  return { name: `${opType}_${outputs[0]}`, op_type: opType, input: inputs, output: outputs, attribute: attributes };
}

export const intAttribute = (name: string, i: number): OnnxAttribute => ({ name, type: OnnxAttributeType.INT, i });
export const intsAttribute = (name: string, ints: number[]): OnnxAttribute => ({ name, type: OnnxAttributeType.INTS, ints });
export const floatAttribute = (name: string, f: number): OnnxAttribute => ({ name, type: OnnxAttributeType.FLOAT, f });

/** Serializes a model; the same spec always yields the same bytes (no timestamps, fixed field order). */
export function encodeOnnxModel(spec: OnnxModelSpec): Uint8Array {
  const type = getModelProtoType();
  const model = {
    ir_version: IR_VERSION,
    producer_name: 'herd-example-models',
    producer_version: '1',
    doc_string: spec.docString ?? '',
    opset_import: [{ domain: '', version: spec.opsetVersion ?? DEFAULT_OPSET }],
    graph: {
      name: spec.graph.name,
      node: spec.graph.nodes,
      initializer: spec.graph.initializers,
      input: spec.graph.inputs,
      output: spec.graph.outputs,
    },
  };
  const problem = type.verify(model);
  if (problem) throw new Error(`invalid ONNX model ${spec.graph.name}: ${problem}`);
  return type.encode(type.fromObject(model)).finish();
}

/** Decodes model bytes to plain objects (int64 as numbers); for tests and inspection. */
export function decodeOnnxModel(bytes: Uint8Array): Record<string, unknown> {
  const type = getModelProtoType();
  return type.toObject(type.decode(bytes), { longs: Number, defaults: false });
}
