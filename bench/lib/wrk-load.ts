// A closed-loop load from wrk (Debian's `wrk`, C, one thread) instead of Node: on 2 cores the undici
// generator spent ~68 µs of CPU per request, more than the bare server it measured (~36 µs), so the floor
// measured the client. Same LoadSpec and LoadResult as closed-loop-load.ts; wrk has no open loop (raw-http-load.ts has).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summariseLoad, type LoadResult, type LoadSpec } from './closed-loop-load.ts';

/** Latency quantiles wrk reports per window: enough to rebuild percentiles when windows merge. */
const QUANTILES = 1000;

export function isWrkInstalled(): boolean {
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

/** wrk's Lua API: the body read from a file (it is binary), the headers, and a machine-readable summary. */
function createScript(spec: LoadSpec, bodyFile: string): string {
  const headers = Object.entries(spec.headers)
    .map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`)
    .join('\n');
  return `wrk.method = "POST"
local f = io.open(${JSON.stringify(bodyFile)}, "rb")
wrk.body = f:read("*a")
f:close()
${headers}
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("HERD %d %d %d %d\\n", summary.requests, summary.duration, e.status, e.connect + e.read + e.write + e.timeout))
  local q = {}
  for i = 1, ${QUANTILES} do q[i] = latency:percentile(100 * (i - 0.5) / ${QUANTILES}) end
  io.write("HERDQ " .. table.concat(q, " ") .. "\\n")
end
`;
}

/**
 * Runs wrk for spec.durationMs (whole seconds, at least 1) with spec.concurrency connections. wrk counts only
 * 2xx/3xx and "status errors", so answers are booked as 200 or 599 (not a real status: "something else").
 * Latencies are rebuilt per request from wrk's quantiles: exact counts, percentiles to 0.1%.
 */
export async function runWrkLoad(spec: LoadSpec): Promise<LoadResult> {
  if (spec.ratePerSecond) throw new Error('wrk runs closed loop only; use runRawOpenLoop (raw-http-load.ts) for an open loop');
  const dir = mkdtempSync(join(tmpdir(), 'herd-wrk-'));
  try {
    const bodyFile = join(dir, 'body.bin');
    const scriptFile = join(dir, 'load.lua');
    writeFileSync(bodyFile, spec.body);
    writeFileSync(scriptFile, createScript(spec, bodyFile));
    const seconds = Math.max(1, Math.round(spec.durationMs / 1000));
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('wrk', ['-t1', `-c${spec.concurrency}`, `-d${seconds}s`, '-s', scriptFile, spec.origin + spec.path], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
      });
      child.on('error', reject);
      child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited with ${code}: ${text}`))));
    });
    const summary = /^HERD (\d+) (\d+) (\d+) (\d+)$/m.exec(out);
    const quantiles = /^HERDQ (.*)$/m.exec(out)?.[1]?.split(' ').map(Number);
    if (!summary || !quantiles || quantiles.length !== QUANTILES) throw new Error(`unreadable wrk output: ${out}`);
    const [requests, durationUs, statusErrors, socketErrors] = summary.slice(1).map(Number) as [number, number, number, number];
    const answered = requests - statusErrors;
    const latencies = Array.from({ length: requests }, (_, i) => quantiles[Math.min(QUANTILES - 1, Math.floor(((i + 0.5) / requests) * QUANTILES))] as number);
    // wrk does not tell which latencies were the non-2xx ones; they stay among the others (and show in statuses).
    const statuses: Record<number, number> = { 200: answered };
    if (statusErrors > 0) statuses[599] = statusErrors;
    return summariseLoad({ ok: latencies.slice(0, answered), refused: latencies.slice(answered), seconds: durationUs / 1e6, statuses, errors: socketErrors });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
