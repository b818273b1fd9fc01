// The model inputs a sequence batcher feeds (control tensors START/END/READY/CORRID and implicit state):
// they are real ONNX inputs but not config `input` entries, so auto-complete and validation must know them.
import type { ConfigDataType, ModelConfig, ModelSequenceControl } from '../../model-config/model-config.ts';

export interface SequenceInput {
  name: string;
  /** Datatype the batcher will feed, when the config pins it down. */
  dataType: ConfigDataType | undefined;
}

function controlDataType(control: ModelSequenceControl): ConfigDataType | undefined {
  if (control.int32_false_true.length > 0) return 'TYPE_INT32';
  if (control.fp32_false_true.length > 0) return 'TYPE_FP32';
  if (control.bool_false_true.length > 0) return 'TYPE_BOOL';
  if (control.kind === 'CONTROL_SEQUENCE_CORRID' && control.data_type !== 'TYPE_INVALID') return control.data_type;
  return undefined;
}

/** Control inputs and state inputs (`state[].input_name`) of the config's sequence_batching, if any. */
export function listSequenceInputs(config: ModelConfig): SequenceInput[] {
  const batching = config.sequence_batching;
  if (!batching) return [];
  return [
    ...batching.control_input.map((c) => ({ name: c.name, dataType: c.control[0] ? controlDataType(c.control[0]) : undefined })),
    ...batching.state.map((s) => ({ name: s.input_name, dataType: s.data_type === 'TYPE_INVALID' ? undefined : s.data_type })),
  ];
}
