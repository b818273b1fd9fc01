// Converts tensors to and from the form they cross threads in (main thread <-> ONNX worker): every payload
// travels as ArrayBuffers the receiver owns outright, moved with postMessage's transfer list, never cloned.
import { invalidArg } from '../../../core/errors.ts';
import { isBytesData, type NumericTensorData, type Tensor } from '../../../core/tensor.ts';
import type { WireTensor } from './onnx-worker-protocol.ts';

/**
 * `copy`: the sender does not own the memory. Request tensors are often views on a larger buffer (a
 * Fastify body, Node's Buffer pool), and structured clone copies a view's *whole* buffer, so just the
 * viewed bytes are copied and transferred (docs/decisions/worker-tensor-transfer.md).
 * `move`: the sender owns the memory and drops it after sending (ORT outputs), so whole buffers go as they are.
 */
export type WireOwnership = 'copy' | 'move';

const MAX_PACKED_BYTES = 0xffff_ffff;

function ownsWholeBuffer(data: NumericTensorData): boolean {
  return data.buffer instanceof ArrayBuffer && data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;
}

function packNumeric(data: NumericTensorData, ownership: WireOwnership, transfer: Set<ArrayBuffer>): NumericTensorData {
  // slice() copies exactly the viewed elements into a new, exactly sized ArrayBuffer.
  const sent = ownership === 'move' && ownsWholeBuffer(data) ? data : data.slice();
  transfer.add(sent.buffer as ArrayBuffer);
  return sent;
}

/** One buffer plus n+1 offsets instead of n small arrays: one transfer, and no view drags its backing buffer along. */
function packBytes(name: string, items: readonly Uint8Array[], transfer: Set<ArrayBuffer>): { bytes: Uint8Array; offsets: Uint32Array } {
  const offsets = new Uint32Array(items.length + 1);
  let total = 0;
  items.forEach((item, i) => {
    total += item.byteLength;
    if (total > MAX_PACKED_BYTES) throw invalidArg(`tensor '${name}' holds more than 4 GiB of byte strings`);
    offsets[i + 1] = total;
  });
  const bytes = new Uint8Array(total);
  items.forEach((item, i) => {
    bytes.set(item, offsets[i]);
  });
  transfer.add(bytes.buffer);
  transfer.add(offsets.buffer);
  return { bytes, offsets };
}

/** The wire form of `tensor`; adds the buffers to move to `transfer` (a Set: outputs may share one buffer). */
export function convertTensorToWire(tensor: Tensor, ownership: WireOwnership, transfer: Set<ArrayBuffer>): WireTensor {
  const { name, datatype, shape } = tensor;
  if (isBytesData(tensor.data)) return { kind: 'bytes', name, datatype, shape, ...packBytes(name, tensor.data, transfer) };
  return { kind: 'numeric', name, datatype, shape, data: packNumeric(tensor.data, ownership, transfer) };
}

/** The tensor back; BYTES elements become views into the one received buffer (no copy). */
export function convertWireToTensor(wire: WireTensor): Tensor {
  const { name, datatype, shape } = wire;
  if (wire.kind === 'numeric') return { name, datatype, shape, data: wire.data };
  const { bytes, offsets } = wire;
  const data = Array.from({ length: offsets.length - 1 }, (_, i) => bytes.subarray(offsets[i], offsets[i + 1]));
  return { name, datatype, shape, data };
}
