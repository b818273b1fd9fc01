// The load generator on its own: its ceiling against a bare node:http server in another process (so
// the number is the generator's, not Herd's), the open-loop schedule, and the progress display.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { KserveHttpClient } from '../../src/client/kserve-http-client.ts';
import { ConcurrencyLoad } from '../../src/cli/bench/concurrency-load.ts';
import { RequestRateLoad } from '../../src/cli/bench/request-rate-load.ts';
import { measureLevel, type LevelSettings } from '../../src/cli/bench/measure-level.ts';
import { ProgressDisplay } from '../../src/cli/bench/progress-display.ts';
import { createZeroCounters } from '../../src/cli/bench/server-stats.ts';
import type { TimedExchange } from '../../src/cli/bench/timed-exchange.ts';
import type { PreparedInferRequest } from '../../src/client/timed-infer-exchange.ts';

// The smallest server that answers like an infer endpoint: read the body, send a fixed JSON answer.
const BARE_SERVER = `
const http = require('node:http');
const body = Buffer.from('{"model_name":"m","model_version":"1","outputs":[]}');
const server = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }); res.end(body); });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

let child: ChildProcess;
let url: string;
let request: PreparedInferRequest;

before(async () => {
  child = spawn(process.execPath, ['-e', BARE_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) => child.stdout?.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
  url = `127.0.0.1:${port}`;
  const builder = new KserveHttpClient({ url });
  request = builder.prepareInfer('m', [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: new Int32Array(16) }]);
  await builder.destroy();
});
after(() => {
  child?.kill();
});

const settings = (mode: LevelSettings['mode'], level: number): LevelSettings => ({
  mode,
  level,
  batchSize: 1,
  measurementIntervalMs: 200,
  stabilityPercentage: 10,
  maxTrials: 3,
  percentile: undefined,
});

test('closed loop against a bare node:http server completes requests and reports its ceiling', async (t) => {
  const concurrency = 8;
  const client = new KserveHttpClient({ url, connections: concurrency, pipelining: 1 });
  // Half a second first: cold, both processes run ~10x slower (interpreted JS, llhttp's wasm not tiered up).
  await measureLevel(
    { ...settings('concurrency', concurrency), maxTrials: 1, measurementIntervalMs: 500 },
    {
      generator: new ConcurrencyLoad(client, request, concurrency),
      readCounters: async () => createZeroCounters(),
    },
  );
  const cpuBefore = process.cpuUsage();
  const result = await measureLevel(settings('concurrency', concurrency), {
    generator: new ConcurrencyLoad(client, request, concurrency),
    readCounters: async () => createZeroCounters(),
  });
  const cpu = process.cpuUsage(cpuBefore);
  await client.destroy();
  // maxTrials 3: every measured window is in the result, so requestCount is every request sent.
  const cpuUsPerRequest = (cpu.user + cpu.system) / result.requestCount;
  t.diagnostic(
    `generator ceiling at concurrency ${concurrency}: ${Math.round(result.inferPerSec)} req/s, ` +
      `avg ${Math.round(result.latency.avgUs)} µs, ~${cpuUsPerRequest.toFixed(1)} CPU-µs per request in the generator process`,
  );
  assert.equal(result.failedCount, 0);
  // No speed threshold here (timed assertions flake on a shared box); the ceiling is reported above.
  assert.ok(result.requestCount > 0, 'the generator completed requests');
});

test('open loop keeps its schedule whatever the answers: sends go on while none has been answered', async () => {
  // No timing asserted: only that an open loop keeps sending with every request unanswered, which a
  // closed loop never does past its concurrency, and that the held requests all count once answered.
  const held: { exchange: TimedExchange<string>; done: (e: TimedExchange<string>) => void }[] = [];
  const pool = {
    createTimedExchange(done: (e: TimedExchange<string>) => void): TimedExchange<string> {
      const exchange: TimedExchange<string> = {
        startMs: 0,
        sentMs: 0,
        responseStartMs: 0,
        endMs: 0,
        responseBytes: 0,
        error: undefined,
        send: () => held.push({ exchange, done }),
      };
      return exchange;
    },
  };
  const load = new RequestRateLoad(pool, 'req', 500, 'poisson', Math.random);
  load.start();
  while (held.length < 20) await new Promise((r) => setTimeout(r, 10));
  assert.equal(load.inFlight, held.length, 'every request sent is still waiting for its answer');
  const stopped = load.stop();
  for (const { exchange, done } of held.splice(0)) done(exchange);
  await stopped;
  assert.equal(load.inFlight, 0);
  assert.equal(load.takeWindow().sentCount >= 20, true);
});

test('progress redraws one line on a TTY and writes plain lines elsewhere', () => {
  const progress = { mode: 'concurrency' as const, level: 4, trial: 2, maxTrials: 10, inferPerSec: 1234.56, latencyUs: 812.4, failed: 0 };
  let tty = '';
  const onTty = new ProgressDisplay({
    write: (s: string) => {
      tty += s;
    },
    isTTY: true,
  });
  onTty.window(progress);
  onTty.window({ ...progress, trial: 3, failed: 2 });
  onTty.note('concurrency 4: done');
  assert.equal(
    tty,
    '\rconcurrency 4: window 2/10, 1234.6 infer/s, latency 812 µs\x1b[K' +
      '\rconcurrency 4: window 3/10, 1234.6 infer/s, latency 812 µs, 2 failed\x1b[K' +
      '\nconcurrency 4: done\n',
  );
  let plain = '';
  const piped = new ProgressDisplay({
    write: (s: string) => {
      plain += s;
    },
  });
  piped.window({ ...progress, mode: 'request-rate', level: 250 });
  piped.finish();
  assert.equal(plain, 'request rate 250/s: window 2/10, 1234.6 infer/s, latency 812 µs\n');
});
