// The catalogue of Triton's example programs the compatibility run knows: per example, how it is run
// (protocol, arguments) or why it is not (GPU, a framework or weights Herd's machine lacks).
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export type Checkout = 'client' | 'python_backend';

export interface CompatExample {
  checkout: Checkout;
  /** Path inside its repository. */
  path: string;
  protocol: 'HTTP' | 'gRPC' | 'HTTP, gRPC';
  args?: string[];
  /** Python (tritonclient from the checkout) unless 'node': the generated-stub JavaScript client. */
  runner?: 'node';
  /** Why it is not run (needs a GPU, a framework or weights not here); reported, never executed. */
  skip?: string;
  /**
   * python_backend's clients are written for HTTP on localhost:8000; this runs a copy importing
   * tritonclient.grpc and dialling :8001 instead, so the same model is driven over gRPC.
   */
  grpcRewrite?: boolean;
  /**
   * Runs against a Herd of its own serving Triton's example repository in explicit mode with nothing
   * loaded (the model-control examples count that repository's models), less the models named.
   */
  exampleRepository?: { omit: string[] };
  /** Said in the table beside the result (a stand-in model, an argument's meaning). */
  note?: string;
}

const WEIGHTS = 'needs densenet_onnx or inception_onnx weights (the testdata holds their configs only; the weights are downloads)';
const CUDA = 'needs a GPU (CUDA shared memory)';
const CLIENT_DIR = 'src/python/examples';
const PB_DIR = 'examples';

function client(file: string, protocol: 'HTTP' | 'gRPC', extra: Partial<CompatExample> = {}): CompatExample {
  return { checkout: 'client', path: `${CLIENT_DIR}/${file}`, protocol, ...extra };
}

function pb(file: string, protocol: 'HTTP' | 'gRPC', extra: Partial<CompatExample> = {}): CompatExample {
  return { checkout: 'python_backend', path: `${PB_DIR}/${file}`, protocol, ...extra };
}

/** Both protocols of a client example that takes `-i grpc` (and, for gRPC, the gRPC port). */
function both(file: string, extra: Partial<CompatExample> = {}, grpcUrl = true): CompatExample[] {
  const grpcArgs = ['-i', 'grpc', ...(grpcUrl ? ['-u', 'localhost:8001'] : [])];
  return [client(file, 'HTTP', extra), client(file, 'gRPC', { ...extra, args: [...grpcArgs, ...(extra.args ?? [])] })];
}

const IDENTITY_NOTE = 'custom_identity_int32 is a Python stand-in for the QA C++ identity backend (bench/compat/models)';
const PYTORCH_NOTE = "model 'pytorch' is add_sub's model.py under pytorch's config (examples/pytorch needs torch)";
const REWRITE_NOTE = 'the HTTP client rewritten to tritonclient.grpc on :8001';

export const EXAMPLES: CompatExample[] = [
  ...both('ensemble_image_client.py', {
    skip: "needs preprocess_inception_ensemble: Triton's image-preprocessing custom backend and TensorFlow's inception_graphdef",
  }),
  client('grpc_client.py', 'gRPC', { skip: WEIGHTS }),
  client('grpc_explicit_byte_content_client.py', 'gRPC'),
  client('grpc_explicit_int8_content_client.py', 'gRPC'),
  client('grpc_explicit_int_content_client.py', 'gRPC'),
  client('grpc_image_client.py', 'gRPC', { skip: WEIGHTS }),
  ...both('image_client.py', { skip: WEIGHTS }),
  ...both('memory_growth_test.py', { note: IDENTITY_NOTE }, false),
  ...both('reuse_infer_objects_client.py'),
  client('simple_grpc_aio_infer_client.py', 'gRPC'),
  client('simple_grpc_aio_infer_client.py', 'gRPC', { args: ['-C', 'gzip'] }),
  client('simple_grpc_aio_sequence_stream_infer_client.py', 'gRPC'),
  client('simple_grpc_async_infer_client.py', 'gRPC'),
  client('simple_grpc_cudashm_client.py', 'gRPC', { skip: CUDA }),
  client('simple_grpc_custom_args_client.py', 'gRPC'),
  client('simple_grpc_custom_repeat.py', 'gRPC', { note: "repeat_int32 is python_backend's examples/decoupled model" }),
  client('simple_grpc_health_metadata.py', 'gRPC'),
  client('simple_grpc_infer_client.py', 'gRPC'),
  client('simple_grpc_infer_client.py', 'gRPC', { args: ['-C', 'gzip'] }),
  client('simple_grpc_infer_client.py', 'gRPC', { args: ['-C', 'deflate'] }),
  client('simple_grpc_keepalive_client.py', 'gRPC'),
  client('simple_grpc_model_control.py', 'gRPC', { exampleRepository: { omit: [] } }),
  client('simple_grpc_sequence_stream_infer_client.py', 'gRPC'),
  client('simple_grpc_sequence_sync_infer_client.py', 'gRPC'),
  client('simple_grpc_shm_client.py', 'gRPC'),
  client('simple_grpc_shm_string_client.py', 'gRPC'),
  client('simple_grpc_string_infer_client.py', 'gRPC'),
  client('simple_http_aio_infer_client.py', 'HTTP'),
  client('simple_http_aio_infer_client.py', 'HTTP', { args: ['--request-compression-algorithm', 'gzip', '--response-compression-algorithm', 'gzip'] }),
  client('simple_http_async_infer_client.py', 'HTTP'),
  client('simple_http_cudashm_client.py', 'HTTP', { skip: CUDA }),
  client('simple_http_health_metadata.py', 'HTTP'),
  client('simple_http_infer_client.py', 'HTTP'),
  client('simple_http_infer_client.py', 'HTTP', { args: ['--request-compression-algorithm', 'gzip', '--response-compression-algorithm', 'gzip'] }),
  client('simple_http_infer_client.py', 'HTTP', { args: ['--request-compression-algorithm', 'deflate', '--response-compression-algorithm', 'deflate'] }),
  client('simple_http_model_control.py', 'HTTP', {
    exampleRepository: { omit: ['simple_identity'] },
    note: "Triton's example repository less simple_identity: the example counts 7 models, the gRPC one 8 (the repository holds 8)",
  }),
  client('simple_http_sequence_sync_infer_client.py', 'HTTP'),
  client('simple_http_shm_client.py', 'HTTP'),
  client('simple_http_shm_string_client.py', 'HTTP'),
  client('simple_http_string_infer_client.py', 'HTTP'),
  {
    checkout: 'client',
    path: 'src/grpc_generated/javascript/client.js',
    protocol: 'gRPC',
    runner: 'node',
    args: ['localhost', '8001'],
    note: "Triton's protos in ./proto, @grpc/grpc-js and @grpc/proto-loader from Herd's node_modules",
  },
  pb('add_sub/client.py', 'HTTP'),
  pb('add_sub/client.py', 'gRPC', { grpcRewrite: true, note: REWRITE_NOTE }),
  pb('auto_complete/client.py', 'HTTP'),
  pb('bls/sync_client.py', 'HTTP', { note: PYTORCH_NOTE }),
  pb('bls/sync_client.py', 'gRPC', { grpcRewrite: true, note: `${REWRITE_NOTE}; ${PYTORCH_NOTE}` }),
  pb('bls/async_client.py', 'HTTP', { note: PYTORCH_NOTE }),
  pb('bls/async_client.py', 'gRPC', { grpcRewrite: true, note: `${REWRITE_NOTE}; ${PYTORCH_NOTE}` }),
  pb('bls_decoupled/sync_client.py', 'HTTP'),
  pb('bls_decoupled/sync_client.py', 'gRPC', { grpcRewrite: true, note: REWRITE_NOTE }),
  pb('bls_decoupled/async_client.py', 'HTTP'),
  pb('bls_decoupled/async_client.py', 'gRPC', { grpcRewrite: true, note: REWRITE_NOTE }),
  pb('custom_metrics/client.py', 'HTTP'),
  pb('custom_metrics/client.py', 'gRPC', { grpcRewrite: true, note: REWRITE_NOTE }),
  pb('decoupled/repeat_client.py', 'gRPC'),
  pb('decoupled/square_client.py', 'gRPC'),
  pb('instance_kind/client.py', 'HTTP', { skip: 'needs PyTorch and torchvision (resnet50)' }),
  pb('jax/client.py', 'HTTP', { skip: 'needs JAX' }),
  pb('preprocessing/client.py', 'gRPC', { skip: 'needs TensorRT (resnet50_trt) and torchvision' }),
  pb('pytorch/client.py', 'HTTP', { skip: 'needs PyTorch' }),
];

/** Why the client repository's examples in other languages are not run here, by folder. */
const OTHER_LANGUAGES: [string, RegExp, string, CompatExample['protocol']?][] = [
  ['src/c++/examples', /\.cc$/, "needs the C++ client library built (its CMake build fetches Triton's common and third_party repositories)"],
  ['src/java', /examples\/\w+\.java$/, 'needs Maven to fetch the Java client and its dependencies', 'HTTP'],
  ['src/grpc_generated/java', /\.(java|scala)$/, 'needs Maven/sbt to fetch grpc-java and generate the stubs'],
  ['src/grpc_generated/go', /\.go$/, 'needs a Go toolchain and its gRPC modules (not on this machine)'],
  ['src/rust', /examples\/\w+\.rs$/, 'needs Cargo to fetch the Rust client and its crates'],
];

function protocolOf(file: string): CompatExample['protocol'] {
  if (/grpc/i.test(file)) return 'gRPC';
  return /http/i.test(file) ? 'HTTP' : 'HTTP, gRPC';
}

/** The client repository's C++, Java, Go and Rust examples, each as a row that says what running it needs. */
export function otherLanguageExamples(clientRoot: string): CompatExample[] {
  const rows: CompatExample[] = [];
  for (const [dir, keep, skip, protocol] of OTHER_LANGUAGES) {
    const found: string[] = [];
    walk(clientRoot, join(clientRoot, dir), (rel) => keep.test(rel), found);
    for (const path of found.sort()) rows.push({ checkout: 'client', path, protocol: protocol ?? protocolOf(path), skip });
  }
  return rows;
}

function walk(root: string, dir: string, keep: (rel: string) => boolean, out: string[]): void {
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) walk(root, full, keep, out);
    else if (keep(relative(root, full))) out.push(relative(root, full));
  }
}

/**
 * The example programs a checkout holds that the catalogue does not name: a newer checkout's
 * additions show up in the table as not yet classified instead of being silently left out.
 */
export function unclassified(checkout: Checkout, root: string): string[] {
  const found: string[] = [];
  if (checkout === 'client') {
    for (const f of readdirSync(join(root, CLIENT_DIR))) if (f.endsWith('.py')) found.push(`${CLIENT_DIR}/${f}`);
  } else {
    walk(root, join(root, PB_DIR), (rel) => /client[^/]*\.py$/.test(rel), found);
  }
  const known = new Set(EXAMPLES.filter((e) => e.checkout === checkout).map((e) => e.path));
  return found.filter((p) => !known.has(p)).sort();
}
