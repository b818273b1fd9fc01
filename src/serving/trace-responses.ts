// The bounded parts of a traced request that grow with it: the stamps of a stream's responses and the tensors
// of level TENSORS.
import type { TritonTraceTensor } from './triton-trace-file.ts';

/** Per request (or model trace): the first responses stamped one by one, then only the last (docs/observability.md). */
export const TRACED_RESPONSE_LIMIT = 32;
/** Per model trace: TENSORS records past this many are left out (counted on the model span). */
export const TRACED_TENSOR_LIMIT = 32;

/**
 * A stream's responses as trace stamps: the first TRACED_RESPONSE_LIMIT are written as they come, later ones
 * only hold their time, and the last of those is written when the trace closes (flush). A span keeps
 * OpenTelemetry's 128 events and a trace file entry stays small however long the stream.
 */
export class ResponseStamps {
  count = 0;
  private held = -1;

  /** True when this response is stamped now; else its time is held as the latest. */
  take(t: number): boolean {
    this.count += 1;
    if (this.count <= TRACED_RESPONSE_LIMIT) return true;
    this.held = t;
    return false;
  }

  /** The held time, once (-1: none). */
  flush(): number {
    const t = this.held;
    this.held = -1;
    return t;
  }
}

/** A TENSORS record as span event attributes (OpenTelemetry mode, where Triton records no tensors). */
export function tensorEventAttributes(tensor: TritonTraceTensor): Record<string, string | boolean | readonly number[] | undefined> {
  return {
    'triton.tensor.name': tensor.name,
    'triton.tensor.datatype': tensor.datatype,
    'triton.tensor.shape': tensor.shape,
    'triton.tensor.data': tensor.data,
    'triton.tensor.truncated': tensor.truncated,
  };
}
