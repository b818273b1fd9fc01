// Maps between Herd's wire datatypes, config TYPE_* names and onnxruntime-node tensor type strings.
// One table so the three vocabularies cannot drift apart.
import type { DataType } from '../../../core/datatype.ts';
import type { ConfigDataType } from '../../model-config/model-config.ts';

/** The onnxruntime-node tensor types Herd can exchange (ort's `Tensor.Type` minus int4/uint4). */
export type OrtTensorType = 'bool' | 'uint8' | 'uint16' | 'uint32' | 'uint64' | 'int8' | 'int16' | 'int32' | 'int64' | 'float16' | 'float32' | 'float64' | 'string';

interface TypeRow {
  ort: OrtTensorType;
  dataType: DataType;
  configType: ConfigDataType;
}

// BF16 has no row: onnxruntime's JS API has no bfloat16 tensor type.
const TYPE_TABLE: readonly TypeRow[] = [
  { ort: 'bool', dataType: 'BOOL', configType: 'TYPE_BOOL' },
  { ort: 'uint8', dataType: 'UINT8', configType: 'TYPE_UINT8' },
  { ort: 'uint16', dataType: 'UINT16', configType: 'TYPE_UINT16' },
  { ort: 'uint32', dataType: 'UINT32', configType: 'TYPE_UINT32' },
  { ort: 'uint64', dataType: 'UINT64', configType: 'TYPE_UINT64' },
  { ort: 'int8', dataType: 'INT8', configType: 'TYPE_INT8' },
  { ort: 'int16', dataType: 'INT16', configType: 'TYPE_INT16' },
  { ort: 'int32', dataType: 'INT32', configType: 'TYPE_INT32' },
  { ort: 'int64', dataType: 'INT64', configType: 'TYPE_INT64' },
  { ort: 'float16', dataType: 'FP16', configType: 'TYPE_FP16' },
  { ort: 'float32', dataType: 'FP32', configType: 'TYPE_FP32' },
  { ort: 'float64', dataType: 'FP64', configType: 'TYPE_FP64' },
  { ort: 'string', dataType: 'BYTES', configType: 'TYPE_STRING' },
];

export function mapDataTypeToOrtType(dataType: DataType): OrtTensorType | undefined {
  return TYPE_TABLE.find((r) => r.dataType === dataType)?.ort;
}

/** ORT metadata reports types as strings; unknown ones (bfloat16, int4, ...) give undefined. */
export function mapOrtTypeToDataType(ortType: string): DataType | undefined {
  return TYPE_TABLE.find((r) => r.ort === ortType)?.dataType;
}

export function mapOrtTypeToConfigType(ortType: string): ConfigDataType | undefined {
  return TYPE_TABLE.find((r) => r.ort === ortType)?.configType;
}

export function mapConfigTypeToOrtType(configType: ConfigDataType): OrtTensorType | undefined {
  return TYPE_TABLE.find((r) => r.configType === configType)?.ort;
}
