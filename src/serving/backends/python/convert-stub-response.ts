// What the stub says about one request's response, as an InferenceResult (error codes: triton-error-codes.ts).
import { HerdError } from '../../../core/errors.ts';
import type { Parameters } from '../../../core/tensor.ts';
import type { InferenceResult } from '../backend.ts';
import { decodeStubTensors } from './convert-stub-tensors.ts';
import type { StubSharedMemory } from './stub-shared-memory.ts';
import { mapTritonErrorCode } from './triton-error-codes.ts';

export interface StubResponse {
  outputs?: unknown;
  error?: { message?: unknown; code?: unknown };
  parameters?: unknown;
  none?: boolean;
}

/** `shm`: the stub's segment, where an execute reply's large outputs are (decoupled responses use the body only). */
export function convertStubResponse(response: StubResponse, body: Buffer, label: string, shm?: StubSharedMemory): InferenceResult {
  if (response.none) return { ok: false, error: new HerdError('INTERNAL', `python model ${label}: execute() returned None for this request`) };
  if (response.error) {
    return { ok: false, error: new HerdError(mapTritonErrorCode(response.error.code), String(response.error.message ?? '')) };
  }
  const outputs = decodeStubTensors(response.outputs, body, `python model ${label}`, shm);
  const parameters = parseParameters(response.parameters);
  return parameters ? { ok: true, outputs, parameters } : { ok: true, outputs };
}

function parseParameters(value: unknown): Parameters | undefined {
  if (typeof value !== 'string') return undefined;
  const parsed = JSON.parse(value) as Record<string, unknown>;
  const out: Parameters = {};
  for (const [key, v] of Object.entries(parsed)) {
    if (typeof v === 'string' || typeof v === 'boolean' || typeof v === 'number') out[key] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
