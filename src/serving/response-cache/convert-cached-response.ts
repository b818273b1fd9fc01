// A cached answer as one Buffer (what both cache implementations store): a length-prefixed JSON header
// naming each output's datatype, shape and byte length, then the raw little-endian bytes; BYTES elements
// carry 4-byte lengths as on the wire. A hit decodes into fresh tensors nobody else holds.
import type { DataType } from '../../core/datatype.ts';
import { allocateTensorData, elementCount, isBytesData, type Parameters, type Tensor } from '../../core/tensor.ts';

export interface CachedResponse {
  outputs: Tensor[];
  parameters?: Parameters;
}

interface Header {
  outputs: { name: string; datatype: DataType; shape: number[]; bytes: number }[];
  parameters?: Parameters;
}

export function convertResponseToCacheEntry(response: CachedResponse): Buffer {
  const parts: Buffer[] = [];
  const header: Header = { outputs: [], ...(response.parameters ? { parameters: response.parameters } : {}) };
  for (const tensor of response.outputs) {
    const bytes = tensorBytes(tensor);
    header.outputs.push({ name: tensor.name, datatype: tensor.datatype, shape: tensor.shape, bytes: bytes.length });
    parts.push(bytes);
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(4);
  length.writeUInt32LE(json.length, 0);
  return Buffer.concat([length, json, ...parts]);
}

export function convertCacheEntryToResponse(entry: Buffer): CachedResponse {
  const headerLength = entry.readUInt32LE(0);
  const header = JSON.parse(entry.subarray(4, 4 + headerLength).toString('utf8')) as Header;
  let offset = 4 + headerLength;
  if (offset > entry.length) throw new Error('cache entry truncated in its header');
  const outputs = header.outputs.map((o): Tensor => {
    const bytes = entry.subarray(offset, offset + o.bytes);
    if (bytes.length !== o.bytes) throw new Error(`cache entry truncated in output '${o.name}'`);
    offset += o.bytes;
    return { name: o.name, datatype: o.datatype, shape: o.shape, data: readData(o.datatype, elementCount(o.shape), bytes) };
  });
  return { outputs, ...(header.parameters ? { parameters: header.parameters } : {}) };
}

function tensorBytes(tensor: Tensor): Buffer {
  const data = tensor.data;
  if (!isBytesData(data)) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const parts: Buffer[] = [];
  for (const element of data) {
    const length = Buffer.alloc(4);
    length.writeUInt32LE(element.byteLength, 0);
    parts.push(length, Buffer.from(element.buffer, element.byteOffset, element.byteLength));
  }
  return Buffer.concat(parts);
}

function readData(datatype: DataType, count: number, bytes: Buffer): Tensor['data'] {
  const data = allocateTensorData(datatype, count);
  if (isBytesData(data)) {
    let offset = 0;
    for (let i = 0; i < count; i++) {
      const length = bytes.readUInt32LE(offset);
      data[i] = new Uint8Array(bytes.subarray(offset + 4, offset + 4 + length));
      offset += 4 + length;
    }
    return data;
  }
  if (bytes.length !== data.byteLength) throw new Error(`cache entry holds ${bytes.length} bytes for ${count} ${datatype} elements`);
  new Uint8Array(data.buffer).set(bytes);
  return data;
}
