// CPU time per thread of a process, from /proc (Linux): on a shared machine, CPU µs per request is a
// steadier measure of a server's cost than requests/s, which moves with whatever else runs.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 1e6 / 100; // USER_HZ is 100 on Linux.

/** CPU µs (user + system) of each thread, keyed by `name#tid`; the main thread's tid is the pid. */
export function readThreadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(`${Number(tid) === pid ? 'main' : name}#${tid}`, (Number(fields[11]) + Number(fields[12])) * TICK_US);
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/**
 * CPU µs spent between two readings: the main (event loop) thread, and every other thread together
 * (ONNX worker threads, V8's GC helpers, libuv's pool: Node names them all "node", so they are not told apart).
 */
export function diffThreadCpu(before: Map<string, number>, after: Map<string, number>): { main: number; others: number; total: number } {
  let main = 0;
  let others = 0;
  for (const [key, us] of after) {
    const spent = us - (before.get(key) ?? 0);
    if (key.startsWith('main#')) main += spent;
    else others += spent;
  }
  return { main, others, total: main + others };
}
