// Cuts one request's rows out of a batched output along dim 0, as a view: no element is copied.
import { elementCount, isBytesData, type Tensor } from '../../../core/tensor.ts';

/** Rows [begin, begin + count) of `tensor`; numeric data is a subarray on the same buffer. */
export function sliceBatchTensor(tensor: Tensor, begin: number, count: number): Tensor {
  const rest = tensor.shape.slice(1);
  const row = elementCount(rest);
  const from = begin * row;
  const to = (begin + count) * row;
  const data = isBytesData(tensor.data) ? tensor.data.slice(from, to) : tensor.data.subarray(from, to);
  return { name: tensor.name, datatype: tensor.datatype, shape: [count, ...rest], data };
}
