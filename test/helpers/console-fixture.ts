// A real Herd for the console's browser tests and screenshots: temp SQLite key store and ledger, a local fake
// OpenAI upstream, Triton's `simple` served, an admin and a viewer key, and 30 days of ledger rows.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { type HerdServer, startHerd } from '../../src/app.ts';
import { describeConfigSources } from '../../src/config/describe-config-sources.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { createSeededRandom } from '../../src/core/seeded-random.ts';
import type { AttemptRow, RequestRecord } from '../../src/gateway/billing/ledger.ts';
import { openLedger } from '../../src/gateway/billing/open-ledger.ts';
import { createRequestId } from '../../src/gateway/flow/request-id.ts';
import { openAICompletion, openAIErrorBody, openAIStreamFrames, scriptedUpstream } from '../gateway/helpers/gateway-fixtures.ts';
import { startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { TRITON_MODEL_REPOSITORY } from '../triton-testdata.ts';
import { TEST_CHANGE, TestKeys } from './test-keys.ts';

const MASTER = 'sk-herd-master-key-for-the-console-tests-0123456789';
const MASTER_ENV = 'HERD_CONSOLE_TEST_MASTER';
const DAY = 86_400_000;

export interface ConsoleFixture {
  server: HerdServer;
  /** Herd's HTTP port, `http://127.0.0.1:<port>`. */
  url: string;
  /** The console's page, `<url>/ui/`. */
  consoleUrl: string;
  master: string;
  /** Secrets of the admin and viewer keys the browser signs in with. */
  adminSecret: string;
  viewerSecret: string;
  /** A client key: may call models, may not sign in. */
  clientSecret: string;
  upstream: MockUpstream;
  /** Rows written into the ledger before start, oldest about 30 days ago. */
  seeded: { requests: number; sinceMs: number };
  /** The `openai` SDK on Herd's /v1 with a secret. */
  openai(secret: string): OpenAI;
  close(): Promise<void>;
}

export interface ConsoleFixtureOptions {
  /** Seeded request rows (default 360: 12 a day). */
  rows?: number;
  log?: (line: string) => void;
}

/** The seeded keys: who spends what (names appear on the pages and in the screenshots). */
const SPENDERS = [
  { name: 'research-notebooks', team: 'research', weight: 4 },
  { name: 'support-bot', team: 'support', weight: 5 },
  { name: 'ci-evals', team: 'platform', weight: 2 },
  { name: 'batch-summaries', team: 'platform', weight: 3 },
];

/** Models as herd.yaml prices them (USD per 1M tokens), the provider that answers, its rate (CNY per list USD). */
const SEEDED_MODELS = [
  { model: 'gpt-4.1', provider: 'relay', rate: 1.0, input: 2.0, output: 8.0, weight: 3 },
  { model: 'gpt-4.1', provider: 'openai', rate: 7.3, input: 2.0, output: 8.0, weight: 1 },
  { model: 'deepseek-v3.2', provider: 'relay', rate: 1.0, input: 0.28, output: 0.42, weight: 4 },
  { model: 'gpt-4.1-mini', provider: 'openai', rate: 7.3, input: 0.4, output: 1.6, weight: 2 },
];
const DIALECTS = ['openai-chat', 'openai-chat', 'openai-chat', 'anthropic-messages', 'openai-responses'];

function herdYaml(dir: string, upstream: string): string {
  const db = join(dir, 'keys.db');
  return `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, trusted_proxies: [127.0.0.1/32] }
auth: { master_key_env: ${MASTER_ENV}, db: "${db}" }
billing: { currency: CNY, ledger: "sqlite:${join(dir, 'ledger.db')}" }
serving:
  model_repository: ["${TRITON_MODEL_REPOSITORY}"]
  model_control_mode: explicit
  load_model: [simple]
  strict_readiness: false
providers:
  relay: { type: openai, base_url: "${upstream}/v1", exchange_rate: 1.0, timeout_ms: 5000, retry: { attempts: 2, base_ms: 5, cap_ms: 50 } }
  openai: { type: openai, base_url: "${upstream}/v1", exchange_rate: 7.3, timeout_ms: 5000, retry: { attempts: 1 } }
models:
  gpt-4.1:
    aliases: [gpt4]
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }, { provider: openai }]
  gpt-4.1-mini:
    price: { input: 0.40, output: 1.60 }
    deployments: [{ provider: openai }]
  deepseek-v3.2:
    price: { input: 0.28, output: 0.42 }
    deployments: [{ provider: relay, upstream_model: deepseek-chat }]
routes:
  tiers: { fast: deepseek-v3.2, quality: gpt-4.1 }
`;
}

function pick<T extends { weight: number }>(items: readonly T[], random: () => number): T {
  const total = items.reduce((sum, item) => sum + item.weight, 0);
  let r = random() * total;
  for (const item of items) {
    r -= item.weight;
    if (r < 0) return item;
  }
  return items[items.length - 1] as T;
}

interface SeedKey {
  id: string;
  name: string;
  teamId: string | undefined;
  teamName: string | undefined;
  weight: number;
}

/** One seeded request and its attempt: priced as the gateway prices it (list USD × the provider's rate). */
function seededRow(keys: readonly SeedKey[], startedAt: number, random: () => number): { request: RequestRecord; attempts: AttemptRow[] } {
  const key = pick(keys, random);
  const target = pick(SEEDED_MODELS, random);
  const roll = random();
  const status = roll < 0.04 ? 'RATE_LIMITED' : roll < 0.07 ? 'UPSTREAM_ERROR' : roll < 0.09 ? 'cancelled' : 'ok';
  const failed = status === 'RATE_LIMITED' || status === 'UPSTREAM_ERROR';
  const cacheHit = !failed && random() < 0.08;
  const promptTokens = failed ? 0 : 1_000 + Math.floor(random() * 20_000);
  const cachedPromptTokens = Math.floor(promptTokens * random() * 0.3);
  const completionTokens = failed ? 0 : 100 + Math.floor(random() * 2_500);
  const listUsdMicros = Math.round(promptTokens * target.input + completionTokens * target.output);
  const costMicros = cacheHit ? 0 : Math.round(listUsdMicros * target.rate);
  const latencyMs = Math.round(300 + random() * 2_500);
  const requestId = createRequestId(startedAt);
  const tokens = { promptTokens, cachedPromptTokens, cacheWriteTokens: 0, completionTokens, reasoningTokens: 0, estimated: false };
  const money = { currency: 'CNY' as const, costMicros, usdMicros: Math.round(costMicros / 7.3), listUsdMicros: cacheHit ? 0 : listUsdMicros };
  const request: RequestRecord = {
    requestId,
    keyId: key.id,
    keyName: key.name,
    teamId: key.teamId,
    teamName: key.teamName,
    dialect: DIALECTS[Math.floor(random() * DIALECTS.length)],
    requestedModel: target.model,
    model: failed ? undefined : target.model,
    provider: failed ? undefined : target.provider,
    upstreamModel: failed ? undefined : target.model,
    status,
    httpStatus: status === 'RATE_LIMITED' ? 429 : status === 'UPSTREAM_ERROR' ? 502 : status === 'cancelled' ? undefined : 200,
    cacheHit,
    savedMicros: cacheHit ? Math.round(listUsdMicros * target.rate) : 0,
    priority: 'NORMAL',
    attempts: failed ? 2 : 1,
    latencyMs,
    ttftMs: Math.round(latencyMs / 4),
    priceSource: `herd.yaml models.${target.model}.price`,
    priceEffectiveAt: undefined,
    startedAt,
    finishedAt: startedAt + latencyMs,
    ...tokens,
    ...money,
  };
  const attempt = (n: number, outcome: string, httpStatus: number | undefined): AttemptRow => ({
    requestId,
    attempt: n,
    model: target.model,
    provider: target.provider,
    upstreamModel: target.model,
    outcome,
    httpStatus,
    latencyMs: Math.round(latencyMs / (failed ? 2 : 1)),
    ttftMs: undefined,
    startedAt: startedAt + (n - 1) * 10,
    ...tokens,
    ...money,
  });
  const attempts = failed
    ? [
        attempt(1, status === 'RATE_LIMITED' ? 'rate_limited' : 'upstream_error', request.httpStatus),
        attempt(2, status === 'RATE_LIMITED' ? 'rate_limited' : 'upstream_error', request.httpStatus),
      ]
    : cacheHit
      ? []
      : [attempt(1, 'ok', 200)];
  return { request, attempts };
}

/** Writes `rows` requests spread over the last 30 days (a few in the last hour, so today has spend). */
async function seedLedger(location: string, keys: readonly SeedKey[], rows: number, now: number): Promise<void> {
  const random = createSeededRandom(30);
  const ledger = await openLedger(location);
  try {
    const times = Array.from({ length: rows }, (_, i) => (i < 12 ? now - (i + 1) * 240_000 : now - Math.floor(random() * 30 * DAY)));
    times.sort((a, b) => a - b);
    const rowsToWrite = times.map((startedAt) => seededRow(keys, startedAt, random));
    // Recorded in one turn: the ledger commits them together rather than one transaction each.
    await Promise.all(rowsToWrite.map(({ request, attempts }) => ledger.record(request, attempts)));
    await ledger.flush();
    // Charged to the keys' budgets as the gateway's settlement does, so the Keys page shows this month's spend.
    for (const { request } of rowsToWrite) {
      if (request.costMicros > 0) await ledger.settle(request.requestId, { costMicros: request.costMicros, keyId: request.keyId, atMs: request.finishedAt });
    }
  } finally {
    await ledger.close();
  }
}

async function createKeys(db: string): Promise<{ admin: string; viewer: string; client: string; spenders: SeedKey[] }> {
  const store = await TestKeys.open(db);
  try {
    const teams = new Map<string, { id: string; name: string }>();
    for (const name of new Set(SPENDERS.map((s) => s.team))) {
      const team = await store.store.createTeam({ name, budgets: [{ period: 'month', amountMicros: 2_000_000_000 }] }, TEST_CHANGE);
      teams.set(name, { id: team.id, name: team.name });
    }
    const spenders: SeedKey[] = [];
    for (const spender of SPENDERS) {
      const team = teams.get(spender.team);
      const created = await store.create({ name: spender.name, team: team?.id, budgetMonthMicros: 20_000_000, rpm: 600 });
      spenders.push({ id: created.key.id, name: created.key.name, teamId: team?.id, teamName: team?.name, weight: spender.weight });
    }
    const admin = await store.create({ name: 'console-admin', role: 'admin' });
    const viewer = await store.create({ name: 'console-viewer', role: 'viewer' });
    const client = await store.create({ name: 'app-client', team: teams.get('support')?.id });
    return { admin: admin.secret, viewer: viewer.secret, client: client.secret, spenders };
  } finally {
    await store.close();
  }
}

/** Starts the whole thing; close() stops Herd and the upstream and removes the temp folder. */
export async function startConsoleFixture(options: ConsoleFixtureOptions = {}): Promise<ConsoleFixture> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-console-'));
  const script = scriptedUpstream({
    okJson: openAICompletion('gpt-4.1', 'Hello from the fake upstream'),
    okFrames: openAIStreamFrames('gpt-4.1', ['Hello', ' from', ' the', ' fake', ' upstream']),
    errorBody: openAIErrorBody,
  });
  const upstream = await startMockUpstream(script.handler);
  try {
    const keys = await createKeys(join(dir, 'keys.db'));
    const now = Date.now();
    const rows = options.rows ?? 360;
    await seedLedger(`sqlite:${join(dir, 'ledger.db')}`, keys.spenders, rows, now);
    // Written out as a user's herd.yaml would be: the Settings page names the file and each value's line.
    const yamlPath = join(dir, 'herd.yaml');
    const yamlText = herdYaml(dir, upstream.url);
    writeFileSync(yamlPath, yamlText);
    const config = parseHerdConfig(yamlText, yamlPath);
    const configSources = describeConfigSources({ config, file: { path: yamlPath, text: yamlText } });
    const server = await startHerd(config, {
      configSources,
      env: { [MASTER_ENV]: MASTER, RELAY_API_KEY: 'sk-upstream-relay', OPENAI_API_KEY: 'sk-upstream-openai' },
      ...(options.log ? { log: options.log } : {}),
    });
    return {
      server,
      url: server.httpUrl,
      consoleUrl: `${server.httpUrl}/ui/`,
      master: MASTER,
      adminSecret: keys.admin,
      viewerSecret: keys.viewer,
      clientSecret: keys.client,
      upstream,
      seeded: { requests: rows, sinceMs: now - 30 * DAY },
      openai: (secret) => new OpenAI({ apiKey: secret, baseURL: `${server.httpUrl}/v1`, maxRetries: 0 }),
      close: async () => {
        await server.close();
        await upstream.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
