// What the upstream batching tests share: fake OpenAI and Anthropic batch upstreams, a real batch store and ledger on
// a throwaway SQLite file, input files in a temp folder, and client batches whose lines are queued for upstream batches.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BatchConfig } from '../../../src/config/batch-config-schema.ts';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import type { Batch, BatchDialect, BatchLine, BatchStore } from '../../../src/gateway/batch/batch-store.ts';
import { DirectoryFileStore } from '../../../src/gateway/batch/directory-file-store.ts';
import { openBatchStore } from '../../../src/gateway/batch/open-batch-store.ts';
import { UpstreamBatcher } from '../../../src/gateway/batch/upstream-batching.ts';
import { BillingService } from '../../../src/gateway/billing/billing-service.ts';
import type { Ledger } from '../../../src/gateway/billing/ledger.ts';
import { openLedger } from '../../../src/gateway/billing/open-ledger.ts';
import { createProviders } from '../../../src/gateway/flow/create-providers.ts';
import { createRequestId } from '../../../src/gateway/flow/request-id.ts';
import type { Provider } from '../../../src/gateway/providers/provider.ts';
import { buildGatewayCatalog, type GatewayCatalog } from '../../../src/gateway/router/gateway-catalog.ts';
import { FakeAnthropicBatches } from '../../helpers/fake-anthropic-batches.ts';
import { FakeOpenAIBatches } from '../../helpers/fake-openai-batches.ts';

export const T0 = Date.parse('2026-06-01T12:00:00Z');
export const OPENAI_DEPLOYMENT = 'oai/gpt-4o-2024-08-06';
export const ANTHROPIC_DEPLOYMENT = 'ant/claude-sonnet-4-5';
const ENV = { OAI_KEY: 'sk-oai-test', ANT_KEY: 'sk-ant-test' };

export interface QueuedRequest {
  customId: string;
  text: string;
}

export interface Fixture {
  dir: string;
  openai: FakeOpenAIBatches;
  anthropic: FakeAnthropicBatches;
  store: BatchStore;
  ledger: Ledger;
  billing: BillingService;
  catalog: GatewayCatalog;
  providers: ReadonlyMap<string, Provider>;
  batchConfig: BatchConfig;
  logs: string[];
  batcher(upstream?: Partial<BatchConfig['upstream']>): UpstreamBatcher;
  /** A client batch whose lines are queued for `deployment` at `queuedAt`; its lines in line order. */
  queueBatch(input: {
    id: string;
    keyId: string;
    dialect: BatchDialect;
    deployment: string;
    requests: QueuedRequest[];
    queuedAt: number;
    expiresAt?: number;
  }): Promise<BatchLine[]>;
  close(): Promise<void>;
}

export async function openFixture(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-upstream-batching-'));
  const openai = await FakeOpenAIBatches.start({ apiKey: ENV.OAI_KEY });
  const anthropic = await FakeAnthropicBatches.start({ apiKey: ENV.ANT_KEY });
  const config = parseHerdConfig(
    `
providers:
  oai: { type: openai, base_url: "${openai.baseUrl}", api_key_env: OAI_KEY }
  ant: { type: anthropic, base_url: "${anthropic.baseUrl}", api_key_env: ANT_KEY }
  relay: { type: openai, base_url: "${openai.baseUrl}", api_key_env: OAI_KEY }
models:
  gpt-4o:
    price: { input: 2.50, output: 10.00 }
    deployments: [{ provider: oai, upstream_model: gpt-4o-2024-08-06 }]
  claude:
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: ant, upstream_model: claude-sonnet-4-5 }]
  cheap:
    price: { input: 1.00, output: 1.00 }
    deployments: [{ provider: relay }]
billing: { currency: USD, ledger: "sqlite:${join(dir, 'herd.db')}", batch_discount: { relay: 0 } }
`,
    join(dir, 'herd.yaml'),
    ENV,
  );
  const ledger = await openLedger(`sqlite:${join(dir, 'herd.db')}`);
  const store = await openBatchStore(`sqlite:${join(dir, 'herd.db')}`);
  const fileStore = new DirectoryFileStore(join(dir, 'files'));
  const billing = new BillingService({ config, ledger, now: () => T0 });
  const catalog = buildGatewayCatalog(config, ENV);
  const providerSet = createProviders(catalog, ENV);
  const logs: string[] = [];
  const batchConfig = config.batch;

  const fixture: Fixture = {
    dir,
    openai,
    anthropic,
    store,
    ledger,
    billing,
    catalog,
    providers: providerSet.byName,
    batchConfig,
    logs,
    batcher: (upstream = {}) =>
      new UpstreamBatcher({
        store,
        fileStore,
        providers: (name) => providerSet.byName.get(name),
        catalog,
        billing,
        keyOf: async (id) => ({ id, name: `key ${id}` }),
        config: { ...batchConfig, upstream: { ...batchConfig.upstream, ...upstream } },
        owner: 'worker-1',
        now: () => T0,
        log: (line) => logs.push(line),
      }),
    async queueBatch(input) {
      const { records, endpoint } = encodeRequests(input.dialect, input.requests);
      const stored = await fileStore.put(
        (async function* () {
          yield Buffer.from(records.text);
        })(),
        { maxBytes: 1e9, maxLines: 1e6 },
      );
      const fileId = `file-${input.id}`;
      await store.insertFile({
        id: fileId,
        keyId: input.keyId,
        purpose: 'batch',
        filename: 'in.jsonl',
        bytes: stored.bytes,
        lines: stored.lines,
        createdAt: T0,
        expiresAt: undefined,
        deletedAt: undefined,
        storageRef: stored.ref,
      });
      await store.insertBatch(newBatch(input.id, input.keyId, input.dialect, endpoint, fileId, input.expiresAt ?? T0 + 86_400_000));
      const model = input.deployment === OPENAI_DEPLOYMENT ? 'gpt-4o' : 'claude';
      const lines: BatchLine[] = input.requests.map((request, i) => ({
        batchId: input.id,
        lineNo: i + 1,
        customId: request.customId,
        requestId: createRequestId(T0),
        bodyOffset: records.ranges[i]!.offset,
        bodyLength: records.ranges[i]!.length,
        model,
        deployment: input.deployment,
        state: 'queued_upstream',
        upstreamBatchId: undefined,
        leaseOwner: undefined,
        leaseUntil: undefined,
        attempts: 1,
        resultRef: undefined,
        statusCode: undefined,
        queuedAt: input.queuedAt,
        result: undefined,
      }));
      await store.insertLines(lines);
      return lines;
    },
    async close() {
      await Promise.all(providerSet.owned.map((p) => p.close()));
      await store.close();
      await ledger.close();
      await openai.close();
      await anthropic.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return fixture;
}

/** The stored input as the submission would have stored it: a JSONL file (OpenAI) or a Message Batch body (Anthropic), each request's byte range. */
function encodeRequests(dialect: BatchDialect, requests: QueuedRequest[]): { records: { text: string; ranges: { offset: number; length: number }[] }; endpoint: string } {
  const ranges: { offset: number; length: number }[] = [];
  if (dialect === 'openai') {
    let text = '';
    for (const r of requests) {
      const record = JSON.stringify({
        custom_id: r.customId,
        method: 'POST',
        url: '/v1/chat/completions',
        body: { model: 'gpt-4o', messages: [{ role: 'user', content: r.text }] },
      });
      ranges.push({ offset: Buffer.byteLength(text), length: Buffer.byteLength(record) });
      text += `${record}\n`;
    }
    return { records: { text, ranges }, endpoint: '/v1/chat/completions' };
  }
  let text = '{"requests": [';
  requests.forEach((r, i) => {
    const item = JSON.stringify({ custom_id: r.customId, params: { model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: r.text }] } });
    if (i > 0) text += ', ';
    ranges.push({ offset: Buffer.byteLength(text), length: Buffer.byteLength(item) });
    text += item;
  });
  return { records: { text: `${text}]}`, ranges }, endpoint: '/v1/messages' };
}

function newBatch(id: string, keyId: string, dialect: BatchDialect, endpoint: string, inputFileId: string, expiresAt: number): Batch {
  return {
    id,
    dialect,
    keyId,
    teamId: undefined,
    endpoint,
    inputFileId,
    status: 'in_progress',
    completionWindowMs: 86_400_000,
    createdAt: T0 - 1000,
    expiresAt,
    inProgressAt: T0 - 1000,
    finalizingAt: undefined,
    completedAt: undefined,
    cancellingAt: undefined,
    cancelledAt: undefined,
    failedAt: undefined,
    expiredAt: undefined,
    metadata: undefined,
    total: 0,
    completed: 0,
    failed: 0,
    outputFileId: undefined,
    errorFileId: undefined,
    reservedMicros: 0,
    currency: 'USD',
    errors: undefined,
  };
}
