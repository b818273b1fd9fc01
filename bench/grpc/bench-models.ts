// The two models of the gRPC/HTTP bench, in a temporary repository (never ./data): Triton's own `simple`
// (add/sub of two INT32[1,16], from the test data, else the example add_sub it mirrors) and a 1 MB
// identity JS model (FP32[1,262144] in and out). Each with its request and what a right answer holds.
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RawTensor } from './grpc-frame.ts';

export interface BenchModel {
  /** The name in the report. */
  label: string;
  name: string;
  inputs: RawTensor[];
  /** The raw bytes each output must hold, by name. */
  expected: Record<string, Buffer>;
}

const TENSOR_ELEMENTS = 262_144;

const IDENTITY_CONFIG = `name: "tensor_1mb"
backend: "js"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1, ${TENSOR_ELEMENTS} ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1, ${TENSOR_ELEMENTS} ] } ]
`;

const IDENTITY_MODEL = `// Answers its input: a 1 MB tensor in and out, so the transports' cost of moving bytes shows.
export default class Identity {
  initialize(args) {
    this.herd = args.herd;
  }

  execute(requests) {
    return requests.map((request) => {
      const input = request.input('INPUT0');
      return { outputs: [this.herd.createTensor('OUTPUT0', 'FP32', input.shape, input.data)] };
    });
  }
}
`;

const bytesOf = (view: ArrayBufferView) => Buffer.from(view.buffer, view.byteOffset, view.byteLength);

/** Creates the repository; `simple` comes from $HERD_TESTDATA (default /work/shared/testdata) when there. */
export function createBenchRepository(herdCheckout: string): { repository: string; models: BenchModel[] } {
  const repository = mkdtempSync(join(tmpdir(), 'herd-grpc-bench-'));
  const testdata = join(process.env['HERD_TESTDATA'] ?? '/work/shared/testdata', 'triton_model_repository/simple');
  const simple = existsSync(testdata) ? 'simple' : 'add_sub';
  cpSync(existsSync(testdata) ? testdata : resolve(herdCheckout, 'examples/model_repository/add_sub'), join(repository, simple), { recursive: true });
  mkdirSync(join(repository, 'tensor_1mb/1'), { recursive: true });
  writeFileSync(join(repository, 'tensor_1mb/config.pbtxt'), IDENTITY_CONFIG);
  writeFileSync(join(repository, 'tensor_1mb/1/model.mjs'), IDENTITY_MODEL);

  const a = Int32Array.from({ length: 16 }, (_, i) => i);
  const b = Int32Array.from({ length: 16 }, () => 1);
  const tensor = Float32Array.from({ length: TENSOR_ELEMENTS }, (_, i) => Math.sin(i));
  const models: BenchModel[] = [
    {
      label: `${simple} (INT32[1,16] ×2)`,
      name: simple,
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: a },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: b },
      ],
      expected: {
        OUTPUT0: bytesOf(a.map((x, i) => x + (b[i] as number))),
        OUTPUT1: bytesOf(a.map((x, i) => x - (b[i] as number))),
      },
    },
    {
      label: 'tensor_1mb (FP32[1,262144] identity, JS)',
      name: 'tensor_1mb',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, TENSOR_ELEMENTS], data: tensor }],
      expected: { OUTPUT0: bytesOf(tensor) },
    },
  ];
  return { repository, models };
}
