// `herd bench` through its real code path (runBenchCommand, no subprocess) against the real server:
// a short closed-loop sweep with the CSV checked, an open-loop run on a model that fails some
// requests, the same over gRPC and with system shared memory, and the one-line errors for an unknown
// model and an unreachable server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HerdServer } from '../../src/app.ts';
import { KserveGrpcClient } from '../../src/client/index.ts';
import { HerdError } from '../../src/core/errors.ts';
import { runBenchCommand, type BenchIo } from '../../src/cli/bench-command.ts';
import { EXAMPLE_REPOSITORY, startTestServer } from '../e2e/start-test-server.ts';

let server: HerdServer;
let dir: string;

// Fails every fourth request (the first one, bench's sanity check, succeeds).
const FLAKY_MODEL = `let herd;
let n = 0;
export function initialize(args) { herd = args.herd; }
export function execute(requests) {
  return requests.map((r) => {
    n += 1;
    if (n % 4 === 0) return { error: 'flaky: every fourth request fails' };
    return { outputs: [{ ...r.input('IN'), name: 'OUT' }] };
  });
}
`;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'herd-bench-e2e-'));
  const repository = join(dir, 'repository');
  mkdirSync(join(repository, 'flaky', '1'), { recursive: true });
  writeFileSync(
    join(repository, 'flaky', 'config.pbtxt'),
    [
      'name: "flaky"',
      'backend: "js"',
      'max_batch_size: 4',
      'input [ { name: "IN" data_type: TYPE_INT32 dims: [ 2 ] } ]',
      'output [ { name: "OUT" data_type: TYPE_INT32 dims: [ 2 ] } ]',
    ].join('\n'),
  );
  writeFileSync(join(repository, 'flaky', '1', 'model.mjs'), FLAKY_MODEL);
  // Explicit mode loads only what the tests use: the whole example repository takes seconds to load.
  server = await startTestServer({ repositories: [EXAMPLE_REPOSITORY, repository], controlMode: 'explicit', loadModel: ['add_sub', 'flaky'] });
});
after(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function captureIo(): BenchIo & { out: () => string; err: () => string } {
  let out = '';
  let err = '';
  return {
    stdout: {
      write: (text: string) => {
        out += text;
      },
    },
    stderr: {
      write: (text: string) => {
        err += text;
      },
      isTTY: false,
    },
    out: () => out,
    err: () => err,
  };
}

const CSV_HEADER =
  'Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,' +
  'Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency';

test("a concurrency sweep 1:2 writes perf_analyzer's CSV with non-zero throughput and server breakdown", async () => {
  const csvFile = join(dir, 'results.csv');
  const io = captureIo();
  const report = await runBenchCommand(
    {
      modelName: 'add_sub',
      url: server.httpUrl,
      concurrencyRange: '1:2',
      measurementInterval: '300',
      maxTrials: '3',
      filename: csvFile,
    },
    io,
  );

  const lines = readFileSync(csvFile, 'utf8').trimEnd().split('\n');
  assert.equal(lines[0], CSV_HEADER);
  assert.equal(lines.length, 3);
  const rows = lines.slice(1).map((line) => line.split(',').map(Number));
  assert.deepEqual(rows.map((r) => r[0]).sort(), [1, 2]);
  for (const row of rows) {
    assert.equal(row.length, 13);
    assert.ok(
      row.every((v) => Number.isFinite(v) && v >= 0),
      lines.join('\n'),
    );
    assert.ok((row[1] as number) > 0, 'Inferences/Second');
    assert.ok((row[6] as number) > 0 || (row[5] as number) > 0, 'server compute from /stats deltas');
    assert.ok((row[9] as number) > 0, 'p50 latency');
  }
  for (const r of report.results) {
    assert.ok(r.requestCount > 0 && r.server.successCount >= r.requestCount * 0.9, `server saw the client's requests: ${r.server.successCount} vs ${r.requestCount}`);
    assert.equal(r.failedCount, 0);
  }
  assert.match(io.out(), /\| Concurrency \| Infer\/s \|/);
  assert.match(io.err(), /^concurrency 1: window 1\/3, [\d.]+ infer\/s/m, 'plain progress lines when stderr is not a TTY');
  assert.doesNotMatch(io.err(), /\r/);
});

test('open loop on a model that fails some requests: failures counted and reported, the run completes', async () => {
  const io = captureIo();
  const report = await runBenchCommand(
    {
      modelName: 'flaky',
      url: server.httpUrl,
      requestRateRange: '200',
      measurementInterval: '200',
      maxTrials: '3',
      batchSize: '2',
      json: true,
    },
    io,
  );
  const [r] = report.results;
  assert.ok(r !== undefined && r.mode === 'request-rate');
  assert.ok(r.inferPerSec > 0);
  assert.ok(r.failedCount > 0);
  assert.match([...r.errors.keys()].join(), /flaky: every fourth request fails/);
  assert.ok(r.sendPerSec > 150 && r.sendPerSec < 250, `sent ${r.sendPerSec}/s at 200/s`);
  assert.match(report.csv, /^Request Rate,Inferences\/Second,/);
  assert.match(io.out(), /errors \(request rate 200\): \d+ × flaky: every fourth request fails/);
});

for (const [protocol, sharedMemory] of [
  ['grpc', 'none'],
  ['grpc', 'system'],
  ['http', 'system'],
] as const) {
  test(`-i ${protocol} --shared-memory ${sharedMemory}: the same sweep, table and CSV as HTTP`, { skip: sharedMemory === 'system' && !existsSync('/dev/shm') }, async () => {
    const io = captureIo();
    const report = await runBenchCommand(
      {
        modelName: 'add_sub',
        url: protocol === 'grpc' ? (server.grpcUrl as string) : server.httpUrl,
        protocol,
        sharedMemory,
        concurrencyRange: '2',
        measurementInterval: '300',
        maxTrials: '3',
      },
      io,
    );
    assert.match(report.csv.split('\n')[0] ?? '', /^Concurrency,Inferences\/Second,Client Send,/);
    const [r] = report.results;
    assert.ok(r !== undefined && r.inferPerSec > 0 && r.failedCount === 0, `level result: ${JSON.stringify(r?.errors ? [...r.errors] : r)}`);
    assert.ok(r.server.successCount >= r.requestCount * 0.9, `server saw the client's requests: ${r.server.successCount} vs ${r.requestCount}`);
    assert.match(io.out(), /\| Concurrency \| Infer\/s \|/);
    assert.match(io.err(), protocol === 'grpc' ? /\(gRPC\)/ : /\(HTTP\)/);
    if (sharedMemory === 'system') {
      assert.match(io.err(), /tensors in system shared memory/);
      // The regions are unregistered and their files removed once the run ends.
      const client = new KserveGrpcClient({ url: server.grpcUrl as string });
      try {
        assert.deepEqual(Object.keys(await client.systemSharedMemoryStatus()), []);
      } finally {
        client.close();
      }
      assert.deepEqual(
        readdirSync('/dev/shm').filter((f) => f.startsWith(`herd_bench_${process.pid}_`)),
        [],
      );
    }
  });
}

test('an unknown model over gRPC is the same one-line error as over HTTP', async () => {
  await assert.rejects(
    runBenchCommand({ modelName: 'nope', url: server.grpcUrl as string, protocol: 'grpc' }, captureIo()),
    (err: unknown) => err instanceof HerdError && err.message === "Request for unknown model: 'nope' is not found",
  );
});

test('an unknown model and an unreachable server are one clear error each', async () => {
  await assert.rejects(
    runBenchCommand({ modelName: 'nope', url: server.httpUrl }, captureIo()),
    (err: unknown) => err instanceof HerdError && err.message === "Request for unknown model: 'nope' is not found",
  );
  await assert.rejects(
    runBenchCommand({ modelName: 'add_sub', url: '127.0.0.1:1' }, captureIo()),
    (err: unknown) =>
      err instanceof HerdError && err.code === 'UNAVAILABLE' && /^cannot reach the server at http:\/\/127\.0\.0\.1:1: /.test(err.message) && !err.message.includes('\n'),
  );
});
