// ModelInferRequest straight off the wire, for the hot path: raw_input_contents are views into the received
// buffer, every other field is read once into the shapes grpc-messages.ts names (as proto-loader fills them).
// A request with typed `contents` is left to proto-loader's decoder (returns undefined): that path is not hot.
import type { InferInputTensorMessage, InferParameterMessage, InferRequestedOutputMessage, ModelInferRequestMessage, ParameterMap } from './grpc-messages.ts';
import { ProtobufReader, UndecodableMessage } from './protobuf-reader.ts';

const EMPTY_MAP: ParameterMap = Object.freeze({}) as ParameterMap;
const LENGTH_DELIMITED = 2;

/** The decoded request, or undefined when it carries typed contents (decode it the generic way). */
export function decodeModelInferRequest(message: Buffer): ModelInferRequestMessage | undefined {
  const r = new ProtobufReader(message);
  const request: ModelInferRequestMessage = { model_name: '', model_version: '', id: '', parameters: EMPTY_MAP, inputs: [], outputs: [], raw_input_contents: [] };
  while (!r.done) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field < 1 || field > 7) {
      r.skip(wire);
      continue;
    }
    if (wire !== LENGTH_DELIMITED) throw new UndecodableMessage();
    switch (field) {
      case 1:
        request.model_name = r.string();
        break;
      case 2:
        request.model_version = r.string();
        break;
      case 3:
        request.id = r.string();
        break;
      case 4:
        request.parameters = readMapEntry(r, request.parameters);
        break;
      case 5: {
        const input = readInput(r);
        if (input === undefined) return undefined;
        request.inputs.push(input);
        break;
      }
      case 6:
        request.outputs.push(readOutput(r));
        break;
      default: {
        const [start, end] = r.span();
        request.raw_input_contents.push(message.subarray(start, end));
      }
    }
  }
  return request;
}

function readInput(outer: ProtobufReader): InferInputTensorMessage | undefined {
  const [start, end] = outer.span();
  const r = new ProtobufReader(outer.buf, start, end);
  const input: InferInputTensorMessage = { name: '', datatype: '', shape: [], parameters: EMPTY_MAP, contents: null };
  while (!r.done) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field === 3 && wire === 0) input.shape.push(readInt64(r));
    else if (field === 3 && wire === LENGTH_DELIMITED) {
      const [s, e] = r.span();
      const packed = new ProtobufReader(r.buf, s, e);
      while (!packed.done) input.shape.push(readInt64(packed));
    } else if (field === 1 || field === 2 || field === 4 || field === 5) {
      if (wire !== LENGTH_DELIMITED) throw new UndecodableMessage();
      if (field === 1) input.name = r.string();
      else if (field === 2) input.datatype = r.string();
      else if (field === 4) input.parameters = readMapEntry(r, input.parameters);
      else return undefined;
    } else r.skip(wire);
  }
  return input;
}

function readOutput(outer: ProtobufReader): InferRequestedOutputMessage {
  const [start, end] = outer.span();
  const r = new ProtobufReader(outer.buf, start, end);
  const output: InferRequestedOutputMessage = { name: '', parameters: EMPTY_MAP };
  while (!r.done) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if ((field === 1 || field === 2) && wire !== LENGTH_DELIMITED) throw new UndecodableMessage();
    if (field === 1) output.name = r.string();
    else if (field === 2) output.parameters = readMapEntry(r, output.parameters);
    else r.skip(wire);
  }
  return output;
}

/** An int64 dimension as a number; beyond 2^53 (or negative) it stays out of range for the shape check to refuse. */
function readInt64(r: ProtobufReader): number {
  return Number(BigInt.asIntN(64, r.varint64()));
}

/** One map<string, InferParameter> entry added to `map` (a new object the first time). An entry without a value is undecodable, as for proto-loader. */
function readMapEntry(outer: ProtobufReader, map: ParameterMap): ParameterMap {
  const [start, end] = outer.span();
  const r = new ProtobufReader(outer.buf, start, end);
  let key = '';
  let value: InferParameterMessage | undefined;
  while (!r.done) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if ((field === 1 || field === 2) && wire !== LENGTH_DELIMITED) throw new UndecodableMessage();
    if (field === 1) key = r.string();
    else if (field === 2) value = readParameter(r);
    else r.skip(wire);
  }
  if (value === undefined) throw new UndecodableMessage();
  // A null-prototype object: a key such as `__proto__` is an ordinary entry.
  const out = map === EMPTY_MAP ? (Object.create(null) as ParameterMap) : map;
  out[key] = value;
  return out;
}

function readParameter(outer: ProtobufReader): InferParameterMessage {
  const [start, end] = outer.span();
  const r = new ProtobufReader(outer.buf, start, end);
  let param: InferParameterMessage = {};
  while (!r.done) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (field < 1 || field > 5) {
      r.skip(wire);
      continue;
    }
    if (wire !== (field === 4 ? 1 : field === 3 ? LENGTH_DELIMITED : 0)) throw new UndecodableMessage();
    // A new object per member: the last one set wins, as protobuf reads a oneof.
    if (field === 1) param = { bool_param: r.varint() !== 0, parameter_choice: 'bool_param' };
    else if (field === 2) param = { int64_param: String(BigInt.asIntN(64, r.varint64())), parameter_choice: 'int64_param' };
    else if (field === 3) param = { string_param: r.string(), parameter_choice: 'string_param' };
    else if (field === 4) param = { double_param: r.double(), parameter_choice: 'double_param' };
    else param = { uint64_param: String(r.varint64()), parameter_choice: 'uint64_param' };
  }
  return param;
}
