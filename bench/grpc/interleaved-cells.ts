// Runs a cell's targets (Herd HTTP, Herd gRPC, floor HTTP, floor gRPC) in alternating windows, each window
// one run of a C load tool, and books the serving process's CPU (/proc/<pid>/stat utime+stime) over its
// own windows only: a shared host's drift falls on every target alike, and each server pays for its own.
import { cpuSeconds } from '../lib/bench-process.ts';
import type { ToolWindow } from './h2load-load.ts';

export interface Target {
  /** The process serving this target, whose CPU is booked. */
  pid: number;
  run(seconds: number): Promise<ToolWindow>;
}

export interface CellResult {
  requests: number;
  failed: number;
  seconds: number;
  perSecond: number;
  meanLatencyUs: number;
  cpuUsPerRequest: number;
}

export async function runInterleavedCell<K extends string>(targets: Record<K, Target>, windows: number, seconds: number): Promise<Record<K, CellResult>> {
  const keys = Object.keys(targets) as K[];
  for (const k of keys) await targets[k].run(1); // warm-up (JIT, connections' first requests), not booked
  const booked = Object.fromEntries(keys.map((k) => [k, { requests: 0, failed: 0, seconds: 0, latencyUs: 0, cpuUs: 0 }])) as Record<
    K,
    { requests: number; failed: number; seconds: number; latencyUs: number; cpuUs: number }
  >;
  for (let w = 0; w < windows; w++) {
    // The order alternates too, so no target always follows the same one.
    for (const k of w % 2 === 0 ? keys : [...keys].reverse()) {
      const before = cpuSeconds(targets[k].pid);
      const r = await targets[k].run(seconds);
      const b = booked[k];
      b.cpuUs += (cpuSeconds(targets[k].pid) - before) * 1e6;
      b.requests += r.requests;
      b.failed += r.failed;
      b.seconds += r.seconds;
      b.latencyUs += r.meanLatencyUs * r.requests;
      await new Promise((done) => setTimeout(done, 100)); // let the last window's GC and closing sockets settle
    }
  }
  return Object.fromEntries(
    keys.map((k) => {
      const b = booked[k];
      const result: CellResult = {
        requests: b.requests,
        failed: b.failed,
        seconds: b.seconds,
        perSecond: (b.requests - b.failed) / b.seconds,
        meanLatencyUs: b.latencyUs / Math.max(1, b.requests),
        cpuUsPerRequest: b.cpuUs / Math.max(1, b.requests),
      };
      return [k, result];
    }),
  ) as Record<K, CellResult>;
}
