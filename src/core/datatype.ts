// KServe v2 tensor datatypes, their element sizes and the typed arrays that hold them.
// The config names (TYPE_FP32, TYPE_STRING, ...) map here so the rest of Herd speaks one vocabulary.

export const DATATYPES = ['BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64', 'FP16', 'FP32', 'FP64', 'BF16', 'BYTES'] as const;

export type DataType = (typeof DATATYPES)[number];

const ELEMENT_BYTES: Record<Exclude<DataType, 'BYTES'>, number> = {
  BOOL: 1,
  UINT8: 1,
  UINT16: 2,
  UINT32: 4,
  UINT64: 8,
  INT8: 1,
  INT16: 2,
  INT32: 4,
  INT64: 8,
  FP16: 2,
  FP32: 4,
  FP64: 8,
  BF16: 2,
};

export function isDataType(value: string): value is DataType {
  return (DATATYPES as readonly string[]).includes(value);
}

/** Bytes per element, or undefined for BYTES (variable length). */
export function elementByteSize(datatype: DataType): number | undefined {
  return datatype === 'BYTES' ? undefined : ELEMENT_BYTES[datatype];
}

/** Config enum (`TYPE_FP32`) to wire datatype (`FP32`); TYPE_STRING is BYTES. */
export function mapConfigTypeToDataType(configType: string): DataType | undefined {
  if (configType === 'TYPE_STRING') return 'BYTES';
  if (!configType.startsWith('TYPE_')) return undefined;
  const name = configType.slice(5);
  return isDataType(name) && name !== 'BYTES' ? name : undefined;
}

/** Wire datatype (`FP32`) to config enum (`TYPE_FP32`); BYTES is TYPE_STRING. */
export function mapDataTypeToConfigType(datatype: DataType): string {
  return datatype === 'BYTES' ? 'TYPE_STRING' : `TYPE_${datatype}`;
}
