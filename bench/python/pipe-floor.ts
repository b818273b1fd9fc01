// The floor under the Python backend's per-request cost: a bare round trip Node → Python → Node of a
// 300-byte message on the same kind of pipes, no Herd code. `idle` lets both sides sleep between
// messages (a 1 ms timer), as they do at c=1 while the HTTP client is away; without it they stay hot.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import type { Readable, Writable } from 'node:stream';

export interface PipeFloor {
  p50us: number;
  p90us: number;
  /** CPU of this (Node) process per round trip, µs: what waking the far end costs the sender here. */
  nodeCpuUs: number;
}

export async function measurePipeFloor(python: string, options: { messages: number; idle: boolean; pollUs: number }): Promise<PipeFloor> {
  const child = spawn(python, [resolve('bench/python/pipe-floor.py'), '3', '4', String(options.pollUs)], { stdio: ['ignore', 'inherit', 'inherit', 'pipe', 'pipe'] });
  const out = child.stdio[3] as Writable;
  const inp = child.stdio[4] as Readable;
  const message = Buffer.alloc(300, 7);
  const times: number[] = [];
  let cpu0 = process.cpuUsage();
  await new Promise<void>((done) => {
    let sent = 0n;
    const send = () => {
      sent = process.hrtime.bigint();
      out.write(message);
    };
    inp.on('data', () => {
      if (times.length === 0) cpu0 = process.cpuUsage();
      times.push(Number(process.hrtime.bigint() - sent) / 1000);
      if (times.length >= options.messages) return done();
      if (options.idle) setTimeout(send, 1);
      else setImmediate(send);
    });
    setTimeout(send, 200);
  });
  const cpu = process.cpuUsage(cpu0);
  out.end();
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(times.length * p))] ?? 0;
  return { p50us: q(0.5), p90us: q(0.9), nodeCpuUs: (cpu.user + cpu.system) / Math.max(1, times.length - 1) };
}
