// A decoded ModelInferRequest to the serving side's InferCall: raw contents through the core binary codec
// (BYTES length-prefixed, FP16/BF16 as raw bits), typed contents, or bytes read from a registered shared
// memory region; requested outputs with classification or an output region.
import { parseBinaryTensorData } from '../core/codecs/kserve-binary-tensor.ts';
import { isDataType, DATATYPES } from '../core/datatype.ts';
import { invalidArg } from '../core/errors.ts';
import { parseModelVersion } from '../core/parse-model-version.ts';
import type { Tensor } from '../core/tensor.ts';
import type { InferCall, RequestedOutput } from '../serving/infer-call.ts';
import type { InferenceService } from '../serving/inference-service.ts';
import type { LoadedModel } from '../serving/repository/loaded-model.ts';
import type { SharedMemoryRef, SystemSharedMemoryRegistry } from '../serving/shared-memory/system-shared-memory-registry.ts';
import { convertGrpcRequestParameters } from './convert-grpc-parameters.ts';
import { convertTypedContents } from './convert-typed-contents.ts';
import type { InferInputTensorMessage, InferRequestedOutputMessage, ModelInferRequestMessage } from './grpc-messages.ts';
import { parseSharedMemoryParams } from './parse-shared-memory-params.ts';

export interface GrpcInferCall {
  call: InferCall;
  /** Outputs the client wants written into a shared memory region instead of the response. */
  outputRegions: ReadonlyMap<string, SharedMemoryRef> | undefined;
}

const NO_OUTPUTS: RequestedOutput[] = [];

/**
 * The model first, as Triton does: a request to an unknown model (or an unparsable version) says so,
 * whatever its inputs. The version is parsed here, once; the handle goes on to the conversion and the infer.
 */
export function resolveGrpcModel(inference: InferenceService, request: ModelInferRequestMessage): LoadedModel {
  return inference.resolve(request.model_name, parseGrpcVersion(request.model_version));
}

export function convertGrpcInferRequest(request: ModelInferRequestMessage, model: LoadedModel, shm: SystemSharedMemoryRegistry): GrpcInferCall {
  const modelName = model.name;
  const version = model.version;
  const parameters = convertGrpcRequestParameters(request.parameters);
  const raw = request.raw_input_contents;
  let rawIndex = 0;
  const inputs = request.inputs.map((input): Tensor => {
    const datatype = input.datatype;
    if (!isDataType(datatype)) throw invalidArg(`invalid datatype '${datatype}' for input '${input.name}'; expected one of ${DATATYPES.join(', ')}`);
    const shape = convertShape(input);
    const context = { name: input.name, datatype, shape, modelName };
    const region = parseSharedMemoryParams(input.name, input.parameters);
    if (region) {
      if (input.contents) throw invalidArg(`unexpected 'content' provided when using shared memory for input tensor '${input.name}' for model '${modelName}'`);
      return { name: input.name, datatype, shape, data: parseBinaryTensorData(shm.read(region), context) };
    }
    if (input.contents && raw.length > 0) {
      throw invalidArg(`contents field must not be specified when using raw_input_contents for '${input.name}' for model '${modelName}'`);
    }
    if (input.contents) return { name: input.name, datatype, shape, data: convertTypedContents(input.contents, context) };
    const bytes = raw[rawIndex++];
    if (bytes === undefined) throw invalidArg(`unable to find data for input tensor '${input.name}' for model '${modelName}' in request.`);
    return { name: input.name, datatype, shape, data: parseBinaryTensorData(bytes, context) };
  });
  if (rawIndex < raw.length) {
    throw invalidArg(`expected ${rawIndex} raw input contents for model '${modelName}', got ${raw.length}: one per input without typed contents or shared memory`);
  }
  let outputRegions: Map<string, SharedMemoryRef> | undefined;
  const outputs =
    request.outputs.length === 0
      ? NO_OUTPUTS
      : request.outputs.map((output) => {
          const region = parseSharedMemoryParams(output.name, output.parameters);
          const classCount = parseClassification(output);
          if (region && classCount !== undefined) throw invalidArg("output can't set both 'shared_memory_region' and 'classification'");
          if (region) {
            shm.check(region);
            (outputRegions ??= new Map()).set(output.name, region);
          }
          return classCount ? { name: output.name, classCount } : { name: output.name };
        });
  return { call: { modelName, version, id: request.id, parameters, inputs, outputs }, outputRegions };
}

function convertShape(input: InferInputTensorMessage): number[] {
  const shape = new Array<number>(input.shape.length);
  for (let i = 0; i < shape.length; i++) {
    const dim = Number(input.shape[i]);
    if (!Number.isSafeInteger(dim) || dim < 0) throw invalidArg(`invalid shape for input '${input.name}': dims must be non-negative integers, got [${input.shape.join(',')}]`);
    shape[i] = dim;
  }
  return shape;
}

function parseClassification(output: InferRequestedOutputMessage): number | undefined {
  const param = output.parameters['classification'];
  if (param === undefined) return undefined;
  if (param.parameter_choice !== 'int64_param') {
    throw invalidArg("invalid value type for 'classification' parameter, expected int64_param");
  }
  const count = Number(param.int64_param);
  if (!Number.isSafeInteger(count) || count <= 0) throw invalidArg("invalid value for 'classification' parameter, expected >= 0");
  return count;
}

/** '' means the policy's choice; otherwise a non-negative integer, as over HTTP. */
export function parseGrpcVersion(raw: string): number | undefined {
  return parseModelVersion(raw);
}
