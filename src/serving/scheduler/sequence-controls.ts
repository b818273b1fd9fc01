// Control tensors for sequence models (START, END, READY, CORRID), built from a request's
// sequence_id / sequence_start / sequence_end parameters as Triton's sequence batcher feeds them.
// State carried between requests of a sequence is not handled here: only the controls.
import { mapConfigTypeToDataType } from '../../core/datatype.ts';
import { HerdError } from '../../core/errors.ts';
import type { Parameters, Tensor, TensorData } from '../../core/tensor.ts';
import type { ModelConfig, ModelSequenceControl } from '../model-config/model-config.ts';

export function createSequenceControls(config: ModelConfig, parameters: Parameters, batchSize: number): Tensor[] {
  const batching = config.sequence_batching;
  if (!batching) return [];
  const id = parameters['sequence_id'];
  if (id === undefined || id === 0 || id === '' || id === false) {
    throw new HerdError('INVALID_ARG', `inference request to model '${config.name}' must specify a non-zero or non-empty correlation ID`);
  }
  const flags = { start: parameters['sequence_start'] === true, end: parameters['sequence_end'] === true };
  const shape = config.max_batch_size > 0 ? [batchSize, 1] : [1];
  return batching.control_input.flatMap((input) => input.control.map((control) => ({ name: input.name, ...controlValue(config, control, flags, id, batchSize), shape })));
}

function controlValue(
  config: ModelConfig,
  control: ModelSequenceControl,
  flags: { start: boolean; end: boolean },
  id: string | number | boolean,
  count: number,
): Pick<Tensor, 'datatype' | 'data'> {
  if (control.kind === 'CONTROL_SEQUENCE_CORRID') return correlationTensor(config, control, id, count);
  const on = control.kind === 'CONTROL_SEQUENCE_START' ? flags.start : control.kind === 'CONTROL_SEQUENCE_END' ? flags.end : true;
  if (control.int32_false_true.length === 2) return { datatype: 'INT32', data: new Int32Array(count).fill(control.int32_false_true[on ? 1 : 0] as number) };
  if (control.fp32_false_true.length === 2) return { datatype: 'FP32', data: new Float32Array(count).fill(control.fp32_false_true[on ? 1 : 0] as number) };
  if (control.bool_false_true.length === 2) return { datatype: 'BOOL', data: new Uint8Array(count).fill(control.bool_false_true[on ? 1 : 0] ? 1 : 0) };
  throw new HerdError('INVALID_ARG', `model '${config.name}': control ${control.kind} needs a two-element *_false_true list`);
}

function correlationTensor(config: ModelConfig, control: ModelSequenceControl, id: string | number | boolean, count: number): Pick<Tensor, 'datatype' | 'data'> {
  const datatype = mapConfigTypeToDataType(control.data_type);
  if (datatype === 'BYTES') return { datatype, data: Array.from({ length: count }, () => new TextEncoder().encode(String(id))) };
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) {
    throw new HerdError('INVALID_ARG', `model '${config.name}' expects an unsigned integer sequence_id, got ${JSON.stringify(id)}`);
  }
  let data: TensorData;
  switch (datatype) {
    case 'UINT64':
      data = new BigUint64Array(count).fill(BigInt(id));
      break;
    case 'INT64':
      data = new BigInt64Array(count).fill(BigInt(id));
      break;
    case 'UINT32':
      data = new Uint32Array(count).fill(id);
      break;
    case 'INT32':
      data = new Int32Array(count).fill(id);
      break;
    default:
      throw new HerdError('INVALID_ARG', `model '${config.name}': CONTROL_SEQUENCE_CORRID data_type ${control.data_type} is not supported`);
  }
  return { datatype: datatype as Tensor['datatype'], data };
}
