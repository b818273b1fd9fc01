// The same answer over HTTP and gRPC for every ready model of the example repositories (Triton's and
// Herd's own): inputs made from each model's metadata, outputs compared byte for byte.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient, KserveHttpClient } from '../../src/client/index.ts';
import { convertTensorDataToBinary } from '../../src/core/codecs/kserve-binary-tensor.ts';
import type { DataType } from '../../src/core/datatype.ts';
import { allocateTensorData, elementCount, type Parameters, type Tensor } from '../../src/core/tensor.ts';
import { EXAMPLE_REPOSITORY, startTestServer, TRITON_REPOSITORY } from './start-test-server.ts';

let server: HerdServer;
let grpc: KserveGrpcClient;
let http: KserveHttpClient;

before(async () => {
  server = await startTestServer({ repositories: [TRITON_REPOSITORY, EXAMPLE_REPOSITORY], strictReadiness: false });
  grpc = new KserveGrpcClient({ url: server.grpcUrl! });
  http = new KserveHttpClient({ url: server.httpUrl });
});
after(async () => {
  grpc?.close();
  await http?.close();
  await server?.close();
});

/** Deterministic values that every model accepts (small non-negative numbers, digit strings). */
function createInput(name: string, datatype: DataType, shape: number[]): Tensor {
  const count = elementCount(shape);
  if (datatype === 'BYTES') return { name, datatype, shape, data: Array.from({ length: count }, (_, i) => new TextEncoder().encode(String(i % 7))) };
  const data = allocateTensorData(datatype, count);
  for (let i = 0; i < count; i++) {
    const v = (i * 7) % 11;
    if (data instanceof BigInt64Array || data instanceof BigUint64Array) data[i] = BigInt(v);
    else if (datatype === 'FP16' || datatype === 'BF16') (data as Uint16Array)[i] = 0x3c00;
    else (data as Exclude<typeof data, BigInt64Array | BigUint64Array | Uint8Array[]>)[i] = datatype === 'BOOL' ? v % 2 : v;
  }
  return { name, datatype, shape, data };
}

test('every ready model answers the same over HTTP and gRPC', async () => {
  const models = (await grpc.repositoryIndex(true)).map((m) => m.name);
  assert.ok(models.length >= 8, models.join(', '));
  let sequenceId = 5000;
  let answered = 0;
  for (const model of models) {
    const meta = await grpc.modelMetadata(model);
    const config = await grpc.modelConfig(model);
    // A decoupled model (echo_llm) answers only streaming calls: ModelInfer and HTTP infer both refuse it.
    if ((config['model_transaction_policy'] as { decoupled?: boolean } | undefined)?.decoupled === true) continue;
    const batching = Number(config['max_batch_size']) > 0;
    const inputs = meta.inputs.map((t) =>
      createInput(
        t.name,
        t.datatype as DataType,
        t.shape.map((d, i) => (d >= 0 ? d : batching && i === 0 ? 2 : 3)),
      ),
    );
    const sequence = config['sequence_batching'] !== null && config['sequence_batching'] !== undefined;
    // Sequence models get a one-request sequence, with the same id on both transports (CORRID may be echoed).
    const parameters: Parameters = sequence ? { sequence_id: ++sequenceId, sequence_start: true, sequence_end: true } : {};
    const encode = (r: { outputs: Tensor[] }) => r.outputs.map((o) => [o.name, o.datatype, o.shape, Buffer.from(convertTensorDataToBinary(o)).toString('hex')]);
    // A model that refuses these inputs (an llm model with no gateway, its ensemble) refuses them alike.
    const settle = async (p: Promise<{ outputs: Tensor[] }>) =>
      p.then(
        (r) => ({ outputs: encode(r) }),
        (err: Error) => ({ error: err.message }),
      );
    const overHttp = await settle(http.infer(model, inputs, { parameters }));
    const overGrpc = await settle(grpc.infer(model, inputs, { parameters }));
    assert.deepEqual(overGrpc, overHttp, model);
    if ('outputs' in overGrpc) {
      answered += 1;
      assert.ok(overGrpc.outputs.length > 0, `${model} answered outputs`);
    }
  }
  assert.ok(answered >= 8, `${answered} models answered`);
});
