// Herd's own per-request work on the gateway side without HTTP: authenticate, parse, validate, ChatGateway.handle
// (route, admission, breaker, provider request and response conversion, ledger, metrics) and the response JSON,
// with the upstream exchange replaced by a canned OpenAI answer. The flow comes from app.ts's createGatewayFlow,
// the function `herd serve` builds it with, so this cannot drift from what is served. Variants run interleaved in one process, so
// their differences are what each part costs; "relay" is the bare relay's JSON work alone. Not a benchmark of record.
// Usage: npx tsx bench/gateway/flow-microbench.ts [--rounds 6] [--requests 100000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as AppModule from '../../src/app.ts';
import type * as AbortLinkModule from '../../src/core/abort-link.ts';
import type * as ConfigModule from '../../src/config/load-herd-config.ts';
import type * as BillingModule from '../../src/gateway/billing/billing-service.ts';
import type * as LedgerModule from '../../src/gateway/billing/open-ledger.ts';
import type * as CacheModule from '../../src/gateway/cache/create-response-cache.ts';
import type * as GatewayModule from '../../src/gateway/flow/chat-gateway.ts';
import type { ChatResponse } from '../../src/gateway/protocol/chat-types.ts';
import type * as UsageModule from '../../src/gateway/wire/openai-chat/convert-usage-to-openai.ts';
import type * as AuthModule from '../../src/gateway/keys/create-gateway-auth.ts';
import type * as LimitsModule from '../../src/gateway/limits/create-gateway-limits.ts';
import type * as RequestModule from '../../src/gateway/providers/openai/convert-openai-request.ts';
import type * as OpenAIUsageModule from '../../src/gateway/wire/openai-chat/convert-openai-usage.ts';
import type { Provider } from '../../src/gateway/providers/provider.ts';
import type * as ValidateModule from '../../src/gateway/ingress/openai-chat/validate-chat-request.ts';
import type * as RegistryModule from '../../src/metrics/create-metrics-registry.ts';
import { ensureBuilt } from '../lib/herd-process.ts';
import { createBenchGatewayYaml } from './bench-gateway-yaml.ts';

// The compiled dist/ that `npm start` runs, not src/ through tsx: tsx (esbuild's keepNames) wraps every closure
// created on the hot path in a naming call, which made the same flow ~35% dearer here (48.6 against 35.6 µs).
ensureBuilt();
const load = async <T>(module: string): Promise<T> => (await import(pathToFileURL(resolve('dist', module)).href)) as T;
const { createGatewayFlow } = await load<typeof AppModule>('app.js');
const { LightAbortController } = await load<typeof AbortLinkModule>('core/abort-link.js');
const { parseHerdConfig } = await load<typeof ConfigModule>('config/load-herd-config.js');
const { BillingService } = await load<typeof BillingModule>('gateway/billing/billing-service.js');
const { openLedger } = await load<typeof LedgerModule>('gateway/billing/open-ledger.js');
const { createResponseCache } = await load<typeof CacheModule>('gateway/cache/create-response-cache.js');
const { convertUsageToOpenAI } = await load<typeof UsageModule>('gateway/convert-usage-to-openai.js');
const { createGatewayAuth } = await load<typeof AuthModule>('gateway/keys/create-gateway-auth.js');
const { createGatewayLimits } = await load<typeof LimitsModule>('gateway/limits/create-gateway-limits.js');
const { convertOpenAIRequest } = await load<typeof RequestModule>('gateway/providers/openai/convert-openai-request.js');
const { convertOpenAIUsage } = await load<typeof OpenAIUsageModule>('gateway/providers/openai/convert-openai-usage.js');
const { validateChatRequest } = await load<typeof ValidateModule>('gateway/validate-chat-request.js');
const { createMetricsRegistry } = await load<typeof RegistryModule>('metrics/create-metrics-registry.js');
type ChatGateway = GatewayModule.ChatGateway;

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const rounds = option('--rounds', 6);
const requests = option('--requests', 100_000);
const MASTER = 'sk-herd-bench-master-key-0000000000000000000000';
// What bench/gateway/mock-upstream.mjs answers.
const CANNED = JSON.stringify({
  id: 'chatcmpl-bench',
  object: 'chat.completion',
  created: 1764460800,
  model: 'gpt-4.1',
  choices: [{ index: 0, message: { role: 'assistant', content: "Bonjour! Comment puis-je vous aider aujourd'hui ?" }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 24, completion_tokens: 12, total_tokens: 36 },
});
const body = Buffer.from(
  JSON.stringify({
    model: 'gpt-4.1',
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Say hello in French.' },
    ],
    max_tokens: 64,
    temperature: 0.7,
  }),
);
const headers = { 'content-type': 'application/json', authorization: `Bearer ${MASTER}` };

/** The OpenAI provider's work on an answer, minus its HTTP exchange: the upstream body serialised, the answer parsed and normalised. */
const cannedProvider: Provider = {
  name: 'bench',
  async chat(req) {
    JSON.stringify(convertOpenAIRequest(req.request, req.upstreamModel, false));
    const response = JSON.parse(CANNED) as ChatResponse;
    const usage = convertOpenAIUsage(response.usage);
    if (usage === undefined) throw new Error('canned answer without usage');
    response.usage = convertUsageToOpenAI(usage);
    return { response, usage, rawFinishReason: 'stop', warnings: [] };
  },
  stream() {
    throw new Error('not measured here');
  },
  async close() {},
};

const dir = mkdtempSync(join(tmpdir(), 'herd-flow-bench-'));
const env = { HERD_BENCH_MASTER: MASTER };
const config = parseHerdConfig(
  createBenchGatewayYaml({
    baseUrl: 'http://127.0.0.1:9/v1',
    ledger: `sqlite:${join(dir, 'ledger.db')}`,
    authDb: join(dir, 'herd.db'),
    upstreamKeyEnv: 'HERD_BENCH_MASTER',
  }),
  'flow-microbench.yaml',
  env,
);
const auth = await createGatewayAuth(config.auth, env);
const ledger = await openLedger(config.billing.ledger, { flushIntervalMs: config.billing.flush_interval_ms, maxBatchRows: config.billing.flush_max_rows });
const billing = new BillingService({ config, ledger });

/** The full flow as `herd serve` builds it (createGatewayFlow), less whatever `without` names. */
async function createFlow(without: readonly string[]): Promise<ChatGateway> {
  const limits = await createGatewayLimits(config.limits);
  const cache = await createResponseCache({ config: config.cache });
  return createGatewayFlow(config, {
    env,
    limits,
    cache,
    providers: { bench: cannedProvider },
    billing: without.includes('ledger') ? undefined : billing,
    registry: without.includes('metrics') ? undefined : createMetricsRegistry(),
    admission: !without.includes('admission'),
  }).flow;
}

type Step = () => Promise<void>;
const through =
  (flow: ChatGateway): Step =>
  async () => {
    const caller = auth.authenticator.authenticate(headers.authorization, '127.0.0.1');
    if (caller instanceof Error) throw caller;
    const request = validateChatRequest(JSON.parse(body.toString('utf8')));
    const answer = await flow.handle(request, { key: caller.key, headers, signal: new LightAbortController().signal });
    if (answer.kind !== 'completion') throw new Error('expected a completion');
    JSON.stringify(answer.response);
  };
const variants: Record<string, Step> = {
  'Herd (as served: ledger, admission, metrics)': through(await createFlow([])),
  'without the ledger': through(await createFlow(['ledger'])),
  'without admission': through(await createFlow(['admission'])),
  'without metrics': through(await createFlow(['metrics'])),
  "bare relay's JSON work alone": async () => {
    JSON.stringify(JSON.parse(body.toString('utf8')));
    JSON.stringify(JSON.parse(CANNED));
  },
};

/** 16 requests in flight; settlement (setImmediate) and ledger batches run as they would in the server. */
async function run(step: Step, n: number): Promise<void> {
  let started = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (started < n) {
        started++;
        await step();
        if (started % 16 === 0) await new Promise((r) => setImmediate(r));
      }
    }),
  );
  await new Promise((r) => setImmediate(r));
  await ledger.flush();
}

for (const step of Object.values(variants)) await run(step, 30_000);
const samples: Record<string, number[]> = {};
for (let r = 0; r < rounds; r++) {
  for (const [name, step] of Object.entries(variants)) {
    const before = process.cpuUsage();
    await run(step, requests);
    const cpu = process.cpuUsage(before);
    (samples[name] ??= []).push((cpu.user + cpu.system) / requests);
  }
}
process.stdout.write(`CPU µs per request, in process (median of ${rounds} rounds of ${requests}, interleaved):\n`);
for (const [name, xs] of Object.entries(samples)) {
  xs.sort((a, b) => a - b);
  process.stdout.write(`  ${name.padEnd(46)} ${(xs[Math.floor(xs.length / 2)] as number).toFixed(1)}  (all: ${xs.map((x) => x.toFixed(1)).join(' ')})\n`);
}
await ledger.close();
await auth.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
