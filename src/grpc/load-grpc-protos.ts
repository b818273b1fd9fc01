// Triton's vendored .proto files, loaded once with proto-loader: INT64/UINT64 as decimal strings (exact),
// enums by name, bytes as Buffers, every field present (defaults), the set oneof member named.
import { loadSync, type Options, type PackageDefinition } from '@grpc/proto-loader';
import { fileURLToPath } from 'node:url';

export const PROTO_LOADER_OPTIONS: Options = {
  keepCase: true,
  longs: String,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
};

let loaded: PackageDefinition | undefined;

export function loadGrpcProtos(): PackageDefinition {
  loaded ??= loadSync(['grpc_service.proto', 'health.proto'], {
    ...PROTO_LOADER_OPTIONS,
    includeDirs: [fileURLToPath(new URL('./protos/', import.meta.url))],
  });
  return loaded;
}
