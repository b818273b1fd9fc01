// gRPC's wire unit for ModelInfer, built and read without a gRPC library: a length-prefixed message
// (1 byte compressed flag, 4 bytes big-endian length, the protobuf), as h2load sends it from a file.
import { loadGrpcProtos } from '../../src/grpc/load-grpc-protos.ts';

interface MethodCodec {
  requestSerialize(value: unknown): Buffer;
  responseDeserialize(bytes: Buffer): unknown;
}

export const MODEL_INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';

function modelInferCodec(): MethodCodec {
  const service = loadGrpcProtos()['inference.GRPCInferenceService'] as unknown as Record<string, MethodCodec>;
  return service['ModelInfer'] as MethodCodec;
}

export interface RawTensor {
  name: string;
  datatype: string;
  shape: number[];
  data: ArrayBufferView;
}

/** A ModelInferRequest with its inputs in raw_input_contents (as tritonclient sends them), framed. */
export function encodeModelInferFrame(model: string, inputs: readonly RawTensor[]): Buffer {
  const message = modelInferCodec().requestSerialize({
    model_name: model,
    inputs: inputs.map((i) => ({ name: i.name, datatype: i.datatype, shape: i.shape })),
    raw_input_contents: inputs.map((i) => Buffer.from(i.data.buffer, i.data.byteOffset, i.data.byteLength)),
  });
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

export interface DecodedInferResponse {
  model_name: string;
  outputs: { name: string; datatype: string; shape: string[] }[];
  raw_output_contents: Buffer[];
}

/** The one message of a unary answer's body; throws unless the body is exactly one uncompressed frame. */
export function decodeModelInferFrame(body: Buffer): DecodedInferResponse {
  if (body.length < 5 || body[0] !== 0) throw new Error(`not one uncompressed gRPC frame (${body.length} bytes, flag ${body[0]})`);
  const length = body.readUInt32BE(1);
  if (body.length !== 5 + length) throw new Error(`gRPC frame says ${length} bytes, body holds ${body.length - 5}`);
  return modelInferCodec().responseDeserialize(body.subarray(5)) as DecodedInferResponse;
}
