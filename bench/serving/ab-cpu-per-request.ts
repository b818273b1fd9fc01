// Server CPU µs per request of two running Herds (an A/B of a change), in alternating windows under the same
// closed-loop load on a KServe model: the measure that survives a shared machine. Not a benchmark of record.
// Usage: npx tsx bench/serving/ab-cpu-per-request.ts MODEL ROUNDS SECONDS NAME=URL=PID NAME=URL=PID
import { readFileSync } from 'node:fs';
import { runLoad } from '../lib/closed-loop-load.ts';
import { diffThreadCpu, readThreadCpu } from '../lib/thread-cpu.ts';

const [model = 'simple', rounds = '6', seconds = '4', ...sides] = process.argv.slice(2);
const servers = sides.map((s) => {
  const [name, url, pid] = s.split('=');
  return { name: name as string, url: url as string, pid: Number(pid) };
});
const url0 = servers[0]?.url as string;
const meta = JSON.parse(await (await fetch(`${url0}/v2/models/${model}`)).text()) as { inputs: { name: string; datatype: string; shape: number[] }[] };
const inputs = meta.inputs.map((i) => {
  const shape = i.shape.map((d) => (d < 0 ? 1 : d));
  const count = shape.reduce((a, b) => a * b, 1);
  return { name: i.name, datatype: i.datatype, shape, data: Array.from({ length: count }, (_, k) => k % 7) };
});
const body = Buffer.from(JSON.stringify({ inputs }));
const headers = { 'content-type': 'application/json' };
const path = `/v2/models/${model}/infer`;
const totals = new Map<string, { cpu: number; requests: number; perRound: number[] }>();
for (const s of servers) await runLoad({ origin: s.url, path, body, headers, concurrency: 8, durationMs: 1000 });
for (let r = 0; r < Number(rounds); r++) {
  // Alternate the order each round so neither side always runs second.
  const order = r % 2 === 0 ? servers : [...servers].reverse();
  for (const s of order) {
    const before = readThreadCpu(s.pid);
    const result = await runLoad({ origin: s.url, path, body, headers, concurrency: 8, durationMs: Number(seconds) * 1000 });
    const cpu = diffThreadCpu(before, readThreadCpu(s.pid)).total;
    const t = totals.get(s.name) ?? { cpu: 0, requests: 0, perRound: [] };
    t.cpu += cpu;
    t.requests += result.requests;
    t.perRound.push(Math.round((cpu / result.requests) * 10) / 10);
    totals.set(s.name, t);
    process.stdout.write(
      `round ${r + 1} ${s.name}: ${Math.round(result.perSecond)} req/s, ${(cpu / result.requests).toFixed(1)} µs CPU/request (${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]} load)\n`,
    );
  }
}
for (const [name, t] of totals) {
  const sorted = [...t.perRound].sort((a, b) => a - b);
  process.stdout.write(
    `${name}: ${(t.cpu / t.requests).toFixed(1)} µs CPU/request overall, median of rounds ${sorted[Math.floor(sorted.length / 2)]} (${t.perRound.join(', ')})\n`,
  );
}
