// Which exporter Herd keeps (docs/decisions/tracing-exporter.md): CPU per span and bytes allocated per span at
// sampling 1.0, for Herd's own tracer and OTLP/HTTP protobuf exporter against the OpenTelemetry JS SDK
// (BatchSpanProcessor + the pinned OTLPTraceExporter, which sends JSON; and the SDK's spans with its protobuf
// serializer). Each variant runs in a fresh process, rounds interleaved; the collector is a child process
// that reads each body and answers 200. Usage: npx tsx bench/tracing/tracing-exporter-bench.ts [--rounds 5] [--requests 20000]
import { execSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runVariant, type VariantResult, VARIANTS, type VariantName } from './tracing-variants.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    requests: { type: 'string', default: '20000' },
    child: { type: 'string' },
    sink: { type: 'string' },
    out: { type: 'string' },
  },
});
const requests = Number(values.requests);

if (values.child !== undefined) {
  const result = await runVariant(values.child as VariantName, values.sink as string, requests);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

const SINK = `
const http = require('node:http');
const server = http.createServer((req, res) => { req.on('data', () => {}); req.on('end', () => res.writeHead(200, {'content-type': req.headers['content-type']}).end(req.headers['content-type'] === 'application/json' ? '{}' : '')); });
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

async function startSink(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
  return { url: `http://127.0.0.1:${port}/v1/traces`, stop: () => child.kill() };
}

function runChild(variant: VariantName, sink: string): Promise<VariantResult> {
  const script = fileURLToPath(import.meta.url);
  // A big young generation: the allocation probes run without a collection in between (they check it).
  const args = [
    '--expose-gc',
    '--min-semi-space-size=64',
    '--max-semi-space-size=64',
    '--import',
    'tsx',
    script,
    '--child',
    variant,
    '--sink',
    sink,
    '--requests',
    String(requests),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as VariantResult) : reject(new Error(`${variant} exited ${code}`))));
  });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

const sink = await startSink();
const results = new Map<VariantName, VariantResult[]>(VARIANTS.map((v) => [v, []]));
for (let round = 0; round < Number(values.rounds); round++) {
  for (const variant of VARIANTS) {
    const r = await runChild(variant, sink.url);
    results.get(variant)?.push(r);
    process.stderr.write(`round ${round + 1} ${variant}: ${r.cpuUsPerSpan.toFixed(2)} µs/span, ${r.allocBytesPerSpan} B/span\n`);
  }
}
sink.stop();

const commit = execSync('git rev-parse --short HEAD').toString().trim();
const fmt = (n: number, d = 2) => n.toFixed(d);
const lines = [
  `# Tracing exporter: Herd's own against the OpenTelemetry JS SDK — ${new Date().toISOString().slice(0, 10)}`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Node ${process.version}; commit ${commit}; ${new Date().toISOString()}; load average at the end ${loadavg()
    .map((l) => fmt(l))
    .join(' ')}.`,
  `Command: \`npx tsx bench/tracing/tracing-exporter-bench.ts --rounds ${values.rounds} --requests ${requests}\`. Each cell is the median of the rounds; each run a fresh process (through tsx), variants interleaved.`,
  `A request is three spans at sampling 1.0 (a SERVER span with 5 attributes, an INTERNAL child with 3, a CLIENT grandchild with 15 and one event), ${requests} requests per run in chunks of 64 with the event loop let run between chunks, then a flush; the collector is another process that reads each body and answers 200.`,
  "CPU: the process's user+system time from the first request to the end of the flush, per span (all threads); net: minus the same loop with the no-op tracer. Allocation: bytes the heap grew by while 6,000 spans were made and ended (no collection ran), per span; retained: what is left of them after a full collection, held by the queue; encode: heap and buffer bytes to encode a 512-span batch, per span; body: encoded bytes per span.",
  '',
  '| variant | CPU µs/span | CPU µs/span, net of the loop | allocated B/span (make, end) | retained B/span (queued) | encode B/span | body B/span | exported/made |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];
const loop = median((results.get('noop') ?? []).map((r) => r.cpuUsPerSpan));
for (const variant of VARIANTS) {
  const rs = results.get(variant) ?? [];
  const m = (f: (r: VariantResult) => number) => median(rs.map(f));
  lines.push(
    `| ${variant} | ${fmt(m((r) => r.cpuUsPerSpan))} | ${variant === 'noop' ? '—' : fmt(m((r) => r.cpuUsPerSpan) - loop)} | ${fmt(
      m((r) => r.allocBytesPerSpan),
      0,
    )} | ${fmt(
      m((r) => r.retainedBytesPerSpan),
      0,
    )} | ${fmt(
      m((r) => r.encodeBytesPerSpan),
      0,
    )} | ${fmt(
      m((r) => r.bodyBytesPerSpan),
      0,
    )} | ${m((r) => r.exported)}/${m((r) => r.made)} |`,
  );
}
lines.push('', 'Per round (CPU µs/span):', '');
for (const variant of VARIANTS) lines.push(`- ${variant}: ${(results.get(variant) ?? []).map((r) => fmt(r.cpuUsPerSpan)).join(', ')}`);
const text = `${lines.join('\n')}\n`;
process.stdout.write(text);
if (values.out) writeFileSync(values.out, text);
