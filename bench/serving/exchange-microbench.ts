// Herd's own per-request work without HTTP: runInferExchange (decode, validate, schedule, batch, run,
// split, encode) over a model repository, `concurrency` requests in flight, in one process. With
// --cpu-prof it shows where that work goes; not a benchmark of record.
// Usage: npx tsx bench/serving/exchange-microbench.ts MODEL CONCURRENCY SECONDS [execution_thread]
import * as ort from 'onnxruntime-node';
import { join } from 'node:path';
import { resolveInferModel, runInferExchange } from '../../src/http/kserve-infer-exchange.ts';
import { createBackends } from '../../src/app.ts';
import { SystemSharedMemoryRegistry } from '../../src/serving/shared-memory/system-shared-memory-registry.ts';
import { InferenceService } from '../../src/serving/inference-service.ts';
import { ModelRepositoryManager } from '../../src/serving/repository/model-repository-manager.ts';
import { createSampleInferBody } from '../lib/closed-loop-load.ts';
import { createVariantRepository } from '../lib/herd-process.ts';

const [model = 'my_model', concurrency = '64', seconds = '4', thread] = process.argv.slice(2);
const { body, headers } = createSampleInferBody(model);
const repo = createVariantRepository(model, (c) => (thread ? `${c}\nparameters { key: "execution_thread" value { string_value: "${thread}" } }\n` : c));
const repository = new ModelRepositoryManager({ repositories: [repo], controlMode: 'none', backends: createBackends() });
await repository.start([]);
const inference = new InferenceService(repository);
const sharedMemory = new SystemSharedMemoryRegistry();
const headerLength = headers['inference-header-content-length'];
let done = 0;
const run = async (until: number) => {
  while (performance.now() < until) {
    // A fresh copy per request, as a socket read would give.
    await runInferExchange(inference, sharedMemory, resolveInferModel(inference, model, undefined), Buffer.from(body), headerLength);
    done += 1;
  }
};
await Promise.all(Array.from({ length: Number(concurrency) }, () => run(performance.now() + 500)));
done = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(Array.from({ length: Number(concurrency) }, () => run(t0 + Number(seconds) * 1000)));
const wall = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${model} c=${concurrency} ${thread ?? 'auto'}: ${Math.round(done / wall)} req/s (${Math.round((wall * 1e6 * Number(concurrency)) / done)} µs per request in flight), process CPU ${Math.round((cpu.user + cpu.system) / done)} µs/request\n`,
);
await repository.close();
// The compute alone, for scale: the same model in onnxruntime-node on one thread, batches of 16.
const session = await ort.InferenceSession.create(join(repo, model, '1', 'model.onnx'), { intraOpNumThreads: 1, interOpNumThreads: 1 });
const feeds = Object.fromEntries(
  session.inputNames.map((name) => [
    name,
    new ort.Tensor(model === 'add_sub' ? 'int32' : 'float32', model === 'add_sub' ? new Int32Array(16 * 16) : new Float32Array(16 * 768), [16, model === 'add_sub' ? 16 : 768]),
  ]),
);
for (let i = 0; i < 100; i++) await session.run(feeds);
const ortCpu0 = process.cpuUsage();
for (let i = 0; i < 1000; i++) await session.run(feeds);
const ortCpu = process.cpuUsage(ortCpu0);
process.stdout.write(`onnxruntime-node alone, batch 16: ${((ortCpu.user + ortCpu.system) / 16_000).toFixed(1)} µs of CPU per sample\n`);
process.exit(0);
