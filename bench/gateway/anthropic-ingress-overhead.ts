// One brief comparison of Herd's own time (x-herd-overhead-ms) and the client's round trip for the same
// non-streaming and streaming request through POST /v1/chat/completions and POST /v1/messages, sequential
// on one keep-alive connection, against a local OpenAI-compatible upstream. Run: npx tsx bench/gateway/anthropic-ingress-overhead.ts
// ENTRY=fastify sends `content-encoding: identity`, which leaves every request to the Fastify route (same exchange).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startHerd } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { openAICompletion, openAIStreamFrames } from '../../test/gateway/helpers/gateway-fixtures.ts';
import { sendJson, sendSse, startMockUpstream } from '../../test/gateway/helpers/mock-upstream.ts';

const N = Number(process.env.N ?? 2000);
const headers: Record<string, string> = { 'content-type': 'application/json', ...(process.env.ENTRY === 'fastify' ? { 'content-encoding': 'identity' } : {}) };
const upstream = await startMockUpstream(async (req, res) => {
  const body = req.body as { stream?: boolean };
  if (body.stream) await sendSse(res, openAIStreamFrames('gpt-4.1', ['Bon', 'jour', ' tout', ' le', ' monde']));
  else sendJson(res, 200, openAICompletion('gpt-4.1', 'Bonjour'));
});
const dir = mkdtempSync(join(tmpdir(), 'herd-anthropic-bench-'));
const config = parseHerdConfig(
  `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }]
`,
  join(dir, 'herd.yaml'),
);
const server = await startHerd(config, { env: { RELAY_API_KEY: 'sk-x' } });
const agent = new Agent({ connections: 1 });
const messages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Say hello.' },
];
const bodies = {
  openai: { path: '/v1/chat/completions', body: { model: 'gpt-4.1', messages, max_tokens: 64, temperature: 0.7 } },
  anthropic: { path: '/v1/messages', body: { model: 'gpt-4.1', system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 64, temperature: 0.7 } },
};

async function run(kind: keyof typeof bodies, stream: boolean): Promise<{ overhead: number; total: number; cpuUs: number }> {
  const overheads: number[] = [];
  const totals: number[] = [];
  const { path, body } = bodies[kind];
  const text = JSON.stringify({ ...body, stream });
  const cpu = process.cpuUsage();
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const res = await request(`${server.httpUrl}${path}`, { method: 'POST', body: text, headers, dispatcher: agent });
    await res.body.text();
    totals.push(performance.now() - t0);
    overheads.push(Number(res.headers['x-herd-overhead-ms']));
  }
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const used = process.cpuUsage(cpu);
  // Client, Herd and the mock upstream share this process: the CPU figure is all three, per request.
  return { overhead: median(overheads), total: median(totals), cpuUs: (used.user + used.system) / N };
}

for (const stream of [false, true]) {
  for (const kind of ['openai', 'anthropic', 'openai', 'anthropic'] as const) {
    const r = await run(kind, stream);
    console.log(
      `${stream ? 'stream' : 'json  '} ${kind.padEnd(9)} p50 x-herd-overhead-ms ${r.overhead.toFixed(3)}  p50 round trip ms ${r.total.toFixed(3)}  cpu µs/req ${r.cpuUs.toFixed(0)}`,
    );
  }
}
await agent.close();
await server.close();
await upstream.close();
