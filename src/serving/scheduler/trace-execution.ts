// Triton's compute timestamps for the traced requests of one execution (a dynamic batch shares them, as
// Triton copies them to each request's trace); nothing is read or allocated when no request of it is traced.
import type { ExecutionMarks, InferenceRequest } from '../backends/backend.ts';

/** Monotonic ms of the execution's start (COMPUTE_START), or -1 when none of `requests` is traced. */
export function startComputeTraces(requests: readonly InferenceRequest[], batchSizes: readonly { batchSize: number }[]): number {
  let traced = false;
  for (const request of requests) if (request.trace !== undefined) traced = true;
  if (!traced) return -1;
  let batch = 0;
  for (const item of batchSizes) batch += item.batchSize;
  const start = performance.now();
  for (const request of requests) request.trace?.computeStart(batch, start);
  return start;
}

/** COMPUTE_INPUT_END and COMPUTE_OUTPUT_START where the backend marked them (hrtime readings), then COMPUTE_END. */
export function endComputeTraces(requests: readonly InferenceRequest[], start: number, hrStart: bigint, marks: ExecutionMarks, hrEnd: bigint): void {
  const inputEnd = start + Number((marks.inputEnd ?? hrStart) - hrStart) / 1e6;
  const outputStart = start + Number((marks.inferEnd ?? hrEnd) - hrStart) / 1e6;
  const end = start + Number(hrEnd - hrStart) / 1e6;
  for (const request of requests) request.trace?.computeEnd(inputEnd, outputStart, end);
}
