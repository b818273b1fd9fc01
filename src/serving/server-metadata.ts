// What GET /v2 answers: the server's name, version and the KServe/Triton extensions Herd implements.
import { HERD_VERSION } from '../core/herd-version.ts';

export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
}

/** Only extensions that are really implemented are listed: clients use this to decide what to call. */
export const SUPPORTED_EXTENSIONS = [
  'classification',
  'model_repository',
  'schedule_policy',
  'model_configuration',
  'binary_tensor_data',
  'parameters',
  'statistics',
  'system_shared_memory',
  // The settings are stored and answered over both transports, as Triton's are; no traces are written.
  'trace',
  'logging',
] as const;

/**
 * `name` is the server id, `triton` by default as tritonserver's --id: Triton's own client examples
 * check it, and a drop-in replacement must pass them. Deployments may set their own.
 */
export function createServerMetadata(id = 'triton'): ServerMetadata {
  return { name: id, version: HERD_VERSION, extensions: [...SUPPORTED_EXTENSIONS] };
}
