// The load API's parameters, one rule for HTTP and gRPC (Triton's http_server.cc HandleRepositoryControl and
// grpc_server.cc RepositoryModelLoad): a `config` string (the model configuration as JSON) and `file:<path>` bytes.
import { HerdError } from '../../core/errors.ts';

export interface LoadParameters {
  /** JSON text of the model configuration; replaces config.pbtxt. */
  config?: string;
  /** `file:<path>` parameters: model files the load builds a temporary model folder from, by relative path. */
  files?: ReadonlyMap<string, Buffer>;
}

export const FILE_PREFIX = 'file:';

/** One parameter as the wire gave it: a string, bytes, or some other kind (named in the refusal). */
export type LoadParameterValue = { kind: 'string'; value: string } | { kind: 'bytes'; value: Buffer } | { kind: 'other' };

/** How each wire names the kind it expects, for the refusal: gRPC's `string_param`, HTTP's JSON string. */
export interface ExpectedKinds {
  string: string;
  bytes: string;
}

/** Triton's refusals, INVALID_ARG, before the repository is touched: a wrong kind or an unknown name. */
export function readLoadParameters(parameters: Iterable<readonly [string, LoadParameterValue]>, expected: ExpectedKinds): LoadParameters {
  let config: string | undefined;
  const files = new Map<string, Buffer>();
  for (const [name, parameter] of parameters) {
    if (name === 'config') {
      if (parameter.kind !== 'string') throw invalidKind(name, expected.string);
      config = parameter.value;
    } else if (name.startsWith(FILE_PREFIX)) {
      if (parameter.kind !== 'bytes') throw invalidKind(name, expected.bytes);
      files.set(name, parameter.value);
    } else {
      throw new HerdError('INVALID_ARG', `unrecognized load parameter '${name}'.`);
    }
  }
  return { ...(config === undefined ? {} : { config }), ...(files.size === 0 ? {} : { files }) };
}

/** The HTTP body's `parameters` object: `config` a string, each `file:` its bytes in base64 (Triton's encoding). */
export function readJsonLoadParameters(parameters: Readonly<Record<string, unknown>> | undefined): LoadParameters {
  const entries = Object.entries(parameters ?? {}).map(([name, value]): [string, LoadParameterValue] => {
    if (typeof value !== 'string') return [name, { kind: 'other' }];
    return [name, name.startsWith(FILE_PREFIX) ? { kind: 'bytes', value: Buffer.from(value, 'base64') } : { kind: 'string', value }];
  });
  return readLoadParameters(entries, { string: 'a string', bytes: 'a base64 string' });
}

/** Triton's ValidateModelName: a load names a model, never a path. */
export function validateModelName(name: string): void {
  const trimmed = name.trim();
  if (trimmed === '') throw new HerdError('INVALID_ARG', 'Model name cannot be empty. Please enter a valid name to deploy.');
  if (trimmed === '..' || trimmed.includes('/')) {
    throw new HerdError('INVALID_ARG', `invalid model name '${name}', model name must not contain path traversal characters`);
  }
}

/** Triton's answer when the repository cannot give the model (INTERNAL, its words), with the reason Triton only logs. */
export function pollFailure(name: string, reason: string): HerdError {
  const error = new HerdError('INTERNAL', `failed to load '${name}', failed to poll from model repository: ${reason}`);
  // Logged as Triton logs it, one line: a stack would read as a fault in Herd, and the request is what failed.
  error.stack = `${error.name}: ${error.message}`;
  return error;
}

function invalidKind(name: string, expected: string): HerdError {
  return new HerdError('INVALID_ARG', `invalid value type for load parameter '${name}', expected ${expected}.`);
}
