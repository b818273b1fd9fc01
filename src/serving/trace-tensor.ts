// A tensor as Triton's trace level TENSORS writes it (TraceManager::TraceTensorActivity in tracer.cc): the
// elements as comma-separated text, numbers as C++'s ostream prints them; bounded, so a large tensor costs little.
import { convertBf16BitsToFloat, convertHalfBitsToFloat } from '../core/codecs/fp16.ts';
import { isBytesData, type Tensor } from '../core/tensor.ts';
import type { TritonTraceTensor } from './triton-trace-file.ts';

/** At most this many characters of data per tensor: the elements that fit are written, then `truncated`. */
export const TRACE_TENSOR_DATA_LIMIT = 4096;

const UTF8 = new TextDecoder();

/** `tensor` for the trace file (and a span event): its data written up to TRACE_TENSOR_DATA_LIMIT characters. */
export function formatTraceTensor(activity: TritonTraceTensor['activity'], tensor: Tensor, limit: number = TRACE_TENSOR_DATA_LIMIT): TritonTraceTensor {
  const element = elementWriter(tensor);
  const count = tensor.data.length;
  let data = '';
  let truncated = false;
  for (let i = 0; i < count; i++) {
    const text = i === 0 ? element(i) : `,${element(i)}`;
    // Whole elements only, so what is written still parses element by element.
    if (data.length + text.length > limit) {
      truncated = true;
      break;
    }
    data += text;
  }
  const traced: TritonTraceTensor = { activity, name: tensor.name, data, shape: tensor.shape, datatype: tensor.datatype };
  if (truncated) traced.truncated = true;
  return traced;
}

/** One element's text, by datatype, as tracer.cc streams it (BYTES quoted; BOOL 0/1; floats with 6 significant digits). */
function elementWriter(tensor: Tensor): (i: number) => string {
  const data = tensor.data;
  if (isBytesData(data)) return (i) => `"${UTF8.decode(data[i])}"`;
  switch (tensor.datatype) {
    case 'FP32':
    case 'FP64':
      return (i) => formatFloat(data[i] as number);
    // Triton writes FP16/BF16 as nothing at all; their values are more use to a reader.
    case 'FP16':
      return (i) => formatFloat(convertHalfBitsToFloat(data[i] as number));
    case 'BF16':
      return (i) => formatFloat(convertBf16BitsToFloat(data[i] as number));
    default:
      // Integers (64-bit ones as bigint), and BOOL's 0/1 as C++ prints a bool.
      return (i) => String(data[i]);
  }
}

/**
 * A number as C++'s default ostream formatting prints it (printf's %g with 6 significant digits): 0.1, 1e-07,
 * 1.23457e+08, inf, nan. Float32 values then read as written (0.1f is 0.1, not 0.10000000149011612).
 */
export function formatFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa = '', exponentText = '0'] = value.toExponential(5).split('e');
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    return `${trimZeros(mantissa)}e${sign}${String(Math.abs(exponent)).padStart(2, '0')}`;
  }
  return trimZeros(value.toFixed(5 - exponent));
}

function trimZeros(text: string): string {
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
