// What the stub says about one request's response, as an InferenceResult, and Herd's error codes as
// the TritonError codes a model sees (and back).
import { HerdError, type ErrorCode } from '../../../core/errors.ts';
import type { Parameters } from '../../../core/tensor.ts';
import type { InferenceResult } from '../backend.ts';
import { decodeStubTensors } from './convert-stub-tensors.ts';
import type { StubSharedMemory } from './stub-shared-memory.ts';

/** pb_utils.TritonError codes (TRITONSERVER_Error_Code). */
export const TRITON_ERROR_CODES = { UNKNOWN: 0, INTERNAL: 1, NOT_FOUND: 2, INVALID_ARG: 3, UNAVAILABLE: 4, UNSUPPORTED: 5, ALREADY_EXISTS: 6, CANCELLED: 7 } as const;

/** A TritonError code as Herd's: those Herd has no code of its own for (UNKNOWN, ALREADY_EXISTS, CANCELLED) answer INTERNAL, as a 500. */
export function mapTritonErrorCode(code: unknown): ErrorCode {
  switch (code) {
    case TRITON_ERROR_CODES.NOT_FOUND:
      return 'NOT_FOUND';
    case TRITON_ERROR_CODES.INVALID_ARG:
      return 'INVALID_ARG';
    case TRITON_ERROR_CODES.UNAVAILABLE:
      return 'UNAVAILABLE';
    case TRITON_ERROR_CODES.UNSUPPORTED:
      return 'UNSUPPORTED';
    default:
      return 'INTERNAL';
  }
}

/** Herd's code as the TritonError code a BLS caller sees. */
export function mapHerdErrorCode(code: ErrorCode): number {
  switch (code) {
    case 'NOT_FOUND':
      return TRITON_ERROR_CODES.NOT_FOUND;
    case 'INVALID_ARG':
    case 'PAYLOAD_TOO_LARGE':
      return TRITON_ERROR_CODES.INVALID_ARG;
    case 'UNAVAILABLE':
    case 'RATE_LIMITED':
    case 'UPSTREAM_UNAVAILABLE':
      return TRITON_ERROR_CODES.UNAVAILABLE;
    case 'UNSUPPORTED':
      return TRITON_ERROR_CODES.UNSUPPORTED;
    default:
      return TRITON_ERROR_CODES.INTERNAL;
  }
}

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
