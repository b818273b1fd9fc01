// `herd bench`: perf_analyzer's measurement method built into Herd, against any KServe v2 server (HTTP or gRPC).
import type { Command } from 'commander';
import { parseBenchOptions, DEFAULT_GRPC_URL, DEFAULT_URL, type BenchFlags } from './bench/parse-bench-options.ts';
import { runBench, type BenchIo, type BenchReport } from './bench/run-bench.ts';

export type { BenchFlags, BenchIo, BenchReport };

const collect = (value: string, previous: string[] = []) => [...previous, value];

export function registerBenchCommand(program: Command): void {
  program
    .command('bench')
    .description("measure a model's throughput and latency the way perf_analyzer does (KServe v2 HTTP or gRPC)")
    .option('-m, --model-name <name>', 'model to benchmark (required)')
    .option('-x, --model-version <version>', 'model version (default: the server picks the latest)')
    .option('-u, --url <host:port>', `server address (default ${DEFAULT_URL}; ${DEFAULT_GRPC_URL} with -i grpc)`)
    .option('-i, --protocol <protocol>', 'http (default) or grpc')
    .option('-b, --batch-size <n>', 'batch size of each request (default 1)')
    .option('--concurrency-range <start:end:step>', 'closed loop: requests kept in flight (default 1)')
    .option('--request-rate-range <start:end:step>', 'open loop: requests per second sent on a schedule')
    .option('--request-distribution <kind>', 'open-loop gaps: constant or poisson (default constant)')
    .option('--binary', 'send and receive tensors with the binary data extension (default)')
    .option('--json', 'send and receive tensors as JSON instead (HTTP only)')
    .option('--shared-memory <kind>', 'none (default) or system: tensors in /dev/shm regions, requests carry references')
    .option('--output-shared-memory-size <bytes>', 'bytes of each output region whose size the model does not fix (default 102400)')
    .option('-p, --measurement-interval <ms>', 'length of each measurement window (default 5000)')
    .option('-s, --stability-percentage <pct>', 'how close the last 3 windows must be (default 10)')
    .option('-r, --max-trials <n>', 'most windows per level before reporting it unstable (default 10)')
    .option('-l, --latency-threshold <ms>', 'stop the sweep once latency reaches this (default 0: no limit)')
    .option('--percentile <n>', 'stabilize on and report this latency percentile instead of the average')
    .option('--shape <name:d1,d2>', 'dims of a variable-sized input, without the batch dim (repeatable)', collect)
    .option('--input-data <kind>', 'random or zero (default random)')
    .option('--string-length <n>', 'characters per BYTES element (default 16)')
    .option('-f, --filename <file>', "write results as perf_analyzer's CSV")
    .option('--verbose-csv', 'add Avg latency, request/response and response wait columns to the CSV')
    .action(async (flags: BenchFlags) => {
      await runBenchCommand(flags);
    });
}

/** What the command does, callable without a process (tests, other tools). Throws HerdError on bad flags or an unreachable server. */
export async function runBenchCommand(flags: BenchFlags, io: BenchIo = { stdout: process.stdout, stderr: process.stderr }): Promise<BenchReport> {
  return runBench(parseBenchOptions(flags), io);
}
