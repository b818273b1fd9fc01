// What GET /v2 answers: the server's name, version and the KServe/Triton extensions Herd implements.
import { readFileSync } from 'node:fs';

export interface ServerMetadata { name: string; version: string; extensions: string[] }

/** Only extensions that are really implemented are listed: clients use this to decide what to call. */
export const SUPPORTED_EXTENSIONS = [
  'classification',
  'model_repository',
  'model_repository(unload_dependents)',
  'schedule_policy',
  'model_configuration',
  'binary_tensor_data',
  'parameters',
  'statistics',
] as const;

const packageVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export function createServerMetadata(): ServerMetadata {
  return { name: 'herd', version: packageVersion, extensions: [...SUPPORTED_EXTENSIONS] };
}
