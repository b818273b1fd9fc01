// Per-request CPU cost of HTTP cancellation on the hot path: a ClientGoneSignal, the scheduler's listener (which
// attaches one 'close' listener on the response) and its removal, against the same loop without them.
// CPU time (process.cpuUsage), not wall time, so a busy machine inflates it less. Usage: npx tsx bench/serving/cancel-signal-microbench.ts
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { ClientGoneSignal } from '../../src/http/client-gone-signal.ts';
const N = 500_000;
function run(withSignal: boolean): number {
  const start = process.cpuUsage();
  let sink = 0;
  for (let i = 0; i < N; i++) {
    const res = Object.assign(new EventEmitter(), { writableFinished: true, destroyed: false }) as unknown as ServerResponse;
    if (withSignal) {
      const signal = new ClientGoneSignal(res);
      const onAbort = () => {
        sink++;
      };
      signal.addEventListener('abort', onAbort);
      signal.removeEventListener('abort', onAbort);
      // The response's own 'close' after a finished answer.
      (res as unknown as EventEmitter).emit('close');
    } else {
      (res as unknown as EventEmitter).emit('close');
    }
  }
  if (sink < 0) console.log(sink);
  const used = process.cpuUsage(start);
  return ((used.user + used.system) * 1000) / N;
}
for (let round = 0; round < 5; round++) {
  const base = run(false);
  const withSignal = run(true);
  console.log(`round ${round + 1}: baseline ${base.toFixed(0)} ns CPU, with signal ${withSignal.toFixed(0)} ns, difference ${(withSignal - base).toFixed(0)} ns per request`);
}
