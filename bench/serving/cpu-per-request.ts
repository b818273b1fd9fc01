// CPU µs per request of `herd serve` (main thread, other threads) under a closed-loop load: the cost measure
// that survives a shared machine, for comparing changes. Not a benchmark of record.
// Usage: npx tsx bench/serving/cpu-per-request.ts MODEL CONCURRENCY SECONDS [KEY=VALUE model parameters...]
import { createSampleInferBody, runLoad } from '../lib/closed-loop-load.ts';
import { createVariantRepository, startHerd } from '../lib/herd-process.ts';
import { diffThreadCpu, readThreadCpu } from '../lib/thread-cpu.ts';

const [model = 'my_model', concurrency = '64', seconds = '4', ...params] = process.argv.slice(2);
const body = createSampleInferBody(model);
const edit = (config: string) =>
  config +
  params
    .map((p) => {
      const [key, value] = p.split('=');
      return `\nparameters { key: "${key}" value { string_value: "${value}" } }\n`;
    })
    .join('');
const server = await startHerd(createVariantRepository(model, edit));
const path = `/v2/models/${model}/infer`;
await runLoad({ origin: server.url, path, ...body, concurrency: Number(concurrency), durationMs: 1000 });
const pid = server.child.pid as number;
const before = readThreadCpu(pid);
const r = await runLoad({ origin: server.url, path, ...body, concurrency: Number(concurrency), durationMs: Number(seconds) * 1000 });
const cpu = diffThreadCpu(before, readThreadCpu(pid));
await server.stop();
const per = (us: number) => Math.round(us / r.requests);
process.stdout.write(
  `${model} c=${concurrency} ${params.join(' ')}: ${Math.round(r.perSecond)} req/s, p50 ${Math.round(r.p50us)} µs; CPU/request: main ${per(cpu.main)} µs, others ${per(cpu.others)} µs, total ${per(cpu.total)} µs\n`,
);
