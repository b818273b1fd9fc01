// A Herd for the batch API tests: a temp folder with the keys and the SQLite ledger (the batch store beside it), an
// OpenAI and an Anthropic model on local mock upstreams (no upstream batch API: lines run realtime), and the batch
// worker off unless asked for, so a batch stays where the API put it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import type { SqlBatchStore } from '../../src/gateway/batch/sql-batch-store.ts';
import { openBatchStore } from '../../src/gateway/batch/open-batch-store.ts';
import { anthropicMessage, openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { TestKeys } from '../helpers/test-keys.ts';

export const BATCH_MASTER = 'sk-herd-master-key-for-the-batch-tests-0123456789';

export interface BatchesHerd {
  server: HerdServer;
  dir: string;
  /** Gateway keys by name: `alice` and `bob` unlimited, `frugal` with a 100-micro daily budget. */
  keys: Record<'alice' | 'bob' | 'frugal', string>;
  /** A second connection to the batch store, for states only the worker reaches (ended batches, line results). */
  store: SqlBatchStore;
  close(): Promise<void>;
}

/** `maxInputSize`: server.http_max_input_size (a request's largest size; a batch's lines are bounded by it too). */
export async function startBatchesHerd(
  prefix: string,
  maxInputSize = 64 * 1024 * 1024,
  options: { worker?: boolean; filesStore?: 'directory' | 'database' } = {},
): Promise<BatchesHerd> {
  const openai: MockUpstream = await startMockUpstream((req, res) => sendJson(res, 200, openAICompletion(String((req.body as { model?: unknown }).model), 'hi')));
  const anthropic: MockUpstream = await startMockUpstream((req, res) => sendJson(res, 200, anthropicMessage(String((req.body as { model?: unknown }).model), 'hi')));
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = join(dir, 'herd.db');
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, http_max_input_size: ${maxInputSize} }
auth: { master_key_env: HERD_BATCH_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
batch: { worker: { enabled: ${options.worker === true}, interval_ms: 20 }, upstream: { providers: [] }, files: { store: ${options.filesStore ?? 'directory'} } }
providers:
  relay: { type: openai, base_url: "${openai.url}/v1", timeout_ms: 2000, retry: { attempts: 1 } }
  anthropic: { type: anthropic, base_url: "${anthropic.url}", timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments: [{ provider: relay }]
  claude-sonnet-4-5:
    price: { input: 3, output: 15 }
    deployments: [{ provider: anthropic }]
`,
    join(dir, 'herd.yaml'),
  );
  const server = await startHerd(config, { env: { RELAY_API_KEY: 'sk-upstream-relay', ANTHROPIC_API_KEY: 'sk-upstream-ant', HERD_BATCH_MASTER: BATCH_MASTER } });
  const testKeys = await TestKeys.open(`sqlite:${db}`);
  const keys = {
    alice: (await testKeys.create({ name: 'alice', allowedModels: '*' })).secret,
    bob: (await testKeys.create({ name: 'bob', allowedModels: '*' })).secret,
    frugal: (await testKeys.create({ name: 'frugal', allowedModels: '*', budgetDayMicros: 100 })).secret,
  };
  await testKeys.close();
  const store = await openBatchStore(`sqlite:${db}`);
  return {
    server,
    dir,
    keys,
    store,
    async close() {
      await store.close();
      await server.close();
      await openai.close();
      await anthropic.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
