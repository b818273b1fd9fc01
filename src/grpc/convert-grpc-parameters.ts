// InferParameter maps to Herd's Parameters and back, with the type checks Triton's gRPC front end makes
// on the request parameters it interprets (sequence_*, priority, timeout, reserved triton_* keys).
import { invalidArg } from '../core/errors.ts';
import type { ParameterValue, Parameters } from '../core/tensor.ts';
import type { InferParameterMessage, ParameterMap } from './grpc-messages.ts';

/** The triton_* request parameters Triton accepts (TRITON_RESERVED_REQUEST_PARAMS). */
const RESERVED_REQUEST_PARAMS = ['triton_enable_empty_final_response'];

const EMPTY: Parameters = {};

/** Request-level parameters, checked as Triton checks them. */
export function convertGrpcRequestParameters(map: ParameterMap): Parameters {
  const keys = Object.keys(map);
  if (keys.length === 0) return EMPTY;
  const out: Parameters = {};
  for (const key of keys) {
    const param: InferParameterMessage = map[key] ?? {};
    const choice = param.parameter_choice;
    switch (key) {
      case 'sequence_id':
        if (choice !== 'int64_param' && choice !== 'string_param') throw invalidArg("invalid value type for 'sequence_id' parameter, expected int64_param or string_param.");
        break;
      case 'sequence_start':
      case 'sequence_end':
        if (choice !== 'bool_param') throw invalidArg(`invalid value type for '${key}' parameter, expected bool_param.`);
        break;
      case 'priority':
        if (choice !== 'int64_param' && choice !== 'uint64_param') throw invalidArg("invalid value type for 'priority' parameter, expected int64_param or uint64_param.");
        if (Number(param[choice]) < 0) throw invalidArg("invalid value for 'priority', expected value >= 0.");
        break;
      case 'timeout':
        if (choice !== 'int64_param') throw invalidArg("invalid value type for 'timeout' parameter, expected int64_param.");
        break;
      default:
        if (key.startsWith('triton_')) {
          if (!RESERVED_REQUEST_PARAMS.includes(key)) {
            throw invalidArg(
              `parameter keys starting with 'triton_' are reserved for Triton usage. Only the following keys starting with 'triton_' are allowed: ${RESERVED_REQUEST_PARAMS.join(' ')}`,
            );
          }
          if (choice !== 'bool_param') throw invalidArg(`invalid value type for '${key}' parameter, expected bool_param.`);
        } else if (choice === 'uint64_param' || choice === undefined) {
          throw invalidArg(`invalid value type for '${key}' parameter, expected int64_param, bool_param, or string_param.`);
        }
    }
    out[key] = convertParameterValue(param);
  }
  return out;
}

/** Tensor-level parameters (shared_memory_*, classification, custom ones) as plain values. */
export function convertGrpcTensorParameters(map: ParameterMap): Parameters {
  const keys = Object.keys(map);
  if (keys.length === 0) return EMPTY;
  const out: Parameters = {};
  for (const key of keys) out[key] = convertParameterValue(map[key] ?? {});
  return out;
}

function convertParameterValue(param: InferParameterMessage): ParameterValue {
  switch (param.parameter_choice) {
    case 'bool_param':
      return param.bool_param === true;
    case 'string_param':
      return param.string_param ?? '';
    case 'double_param':
      return param.double_param ?? 0;
    case 'int64_param':
    case 'uint64_param': {
      // Exact when beyond 2^53: the decimal text is kept.
      const text = String(param[param.parameter_choice] ?? '0');
      const value = Number(text);
      return Number.isSafeInteger(value) ? value : text;
    }
    default:
      return '';
  }
}

/** Herd's response parameters as InferParameter messages (integers as int64, others by their JS type). */
export function convertParametersToGrpc(parameters: Parameters | undefined): ParameterMap {
  if (!parameters) return {};
  const out: ParameterMap = {};
  for (const [key, value] of Object.entries(parameters)) {
    if (typeof value === 'boolean') out[key] = { bool_param: value };
    else if (typeof value === 'string') out[key] = { string_param: value };
    else if (Number.isInteger(value)) out[key] = { int64_param: value };
    else out[key] = { double_param: value };
  }
  return out;
}
