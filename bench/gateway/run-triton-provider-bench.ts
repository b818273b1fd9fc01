// The `type: triton` provider's cost: /v1/chat/completions on a JS text model in process and on a second
// Herd over HTTP (remote mode), against the floor of calling that model's generate endpoint directly.
// Both Herds run in this process with the load generator (ratios, not absolute numbers). Run:
//   npx tsx bench/gateway/run-triton-provider-bench.ts [seconds per variant, default 5] [concurrency, default 16]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHerd } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { runLoad } from '../lib/closed-loop-load.ts';

const seconds = Number(process.argv[2] ?? 5);
const concurrency = Number(process.argv[3] ?? 16);
const fixtures = resolve('test/fixtures/triton_provider_repository');
const dir = mkdtempSync(join(tmpdir(), 'herd-triton-bench-'));
const serving = (extra = '') => `server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving: { model_repository: ["${fixtures}"], model_control_mode: explicit, load_model: [echo_text] }
${extra}`;

const remote = await startHerd(parseHerdConfig(serving(), join(dir, 'remote.yaml')));
const gateway = await startHerd(
  parseHerdConfig(
    serving(`auth: { db: "${join(dir, 'keys.db')}" }
billing: { ledger: off }
cache: { default_mode: off }
providers:
  local: { type: triton }
  remote: { type: triton, base_url: "${remote.httpUrl}" }
models:
  local-text: { deployments: [{ provider: local, upstream_model: echo_text }] }
  remote-text: { deployments: [{ provider: remote, upstream_model: echo_text }] }
`),
    join(dir, 'gateway.yaml'),
  ),
);
const json = { 'content-type': 'application/json' };
const chat = (model: string) => Buffer.from(JSON.stringify({ model, messages: [{ role: 'user', content: 'hello there, how are you today?' }] }));
const variants: [string, string, string, Buffer][] = [
  ['generate on echo_text (floor)', gateway.httpUrl, '/v2/models/echo_text/generate', Buffer.from(JSON.stringify({ text_input: 'hello there, how are you today?' }))],
  ['chat, type: triton in process', gateway.httpUrl, '/v1/chat/completions', chat('local-text')],
  ['chat, type: triton remote (second Herd)', gateway.httpUrl, '/v1/chat/completions', chat('remote-text')],
];
const rows: string[] = [];
let floor = 0;
for (const [label, origin, path, body] of variants) {
  await runLoad({ origin, path, body, headers: json, concurrency, durationMs: 1000 }); // warm-up
  const r = await runLoad({ origin, path, body, headers: json, concurrency, durationMs: seconds * 1000 });
  floor ||= r.perSecond;
  rows.push(
    `| ${label} | ${r.perSecond.toFixed(0)} | ${(r.perSecond / floor).toFixed(2)} | ${(r.p50us / 1000).toFixed(2)} | ${(r.p99us / 1000).toFixed(2)} | ${JSON.stringify(r.statuses)} |`,
  );
}
await gateway.close();
await remote.close();
console.log(`c=${concurrency}, ${seconds} s per variant\n\n| variant | req/s | ÷ floor | p50 ms | p99 ms | statuses |\n| --- | --- | --- | --- | --- | --- |\n${rows.join('\n')}`);
