// The load API's parameters, as both transports hand them over: a `config` override (the model
// configuration as JSON text) and `file:<path>` entries, which Herd does not take. One rule for HTTP and gRPC.
import { HerdError } from '../../core/errors.ts';

/** The config override to load with, or undefined; `parameterNames` are every parameter's name. */
export function resolveLoadOverride(config: unknown, parameterNames: readonly string[]): string | undefined {
  if (config !== undefined && typeof config !== 'string') {
    throw new HerdError('INVALID_ARG', "load parameter 'config' must be a string holding the model configuration as JSON");
  }
  const files = parameterNames.filter((k) => k.startsWith('file:'));
  if (files.length > 0) {
    throw new HerdError('UNSUPPORTED', `loading model files through the load API (${files.join(', ')}) is not supported; put them in the model repository`);
  }
  return config;
}
