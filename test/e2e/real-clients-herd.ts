// Herd as the real-client suite runs it: three local upstreams that play the model (Anthropic Messages, an
// OpenAI-compatible relay with its own /responses, a chat-only relay), the models the clients ask for routed
// onto them, one gateway key per client, and the SQLite ledger a test reads the rows from.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';
import { finalText, toolCalls, writeNote } from '../clients/client-cases.ts';
import { startRefusingProxy, type RefusingProxy } from '../clients/refusing-proxy.ts';
import { startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { toolLoopHandler } from '../gateway/helpers/tool-loop-upstream.ts';

export const CLIENT_NAMES = ['claude-code', 'codex', 'ai-sdk', 'langchain'] as const;
export type ClientName = (typeof CLIENT_NAMES)[number];

/** The ids the pinned clients send by default (recorded in test/fixtures/clients): Herd must route them. */
export const CLAUDE_CODE_DEFAULT_MODEL = 'claude-opus-5-5';
export const CODEX_DEFAULT_MODEL = 'gpt-6.2-sol';

export interface LedgerRow {
  key_name: string;
  model_requested: string;
  model: string | null;
  provider: string | null;
  dialect: string | null;
  status: string;
}

export interface RealClientsHerd {
  server: HerdServer;
  /** Herd's root URL (Anthropic clients) and its OpenAI base (…/v1). */
  url: string;
  openaiBase: string;
  keys: Record<ClientName, string>;
  anthropic: MockUpstream;
  responsesRelay: MockUpstream;
  chatRelay: MockUpstream;
  proxy: RefusingProxy;
  /** The clients' working folder, with the note their tools read. */
  dir: string;
  /**
   * The ledger's rows for a key (and a requested model, when given), once at least `atLeast` of them are written:
   * the ledger flushes in the background.
   */
  ledgerRows(key: ClientName, atLeast: number, modelRequested?: string): Promise<LedgerRow[]>;
  close(): Promise<void>;
}

const price = 'price: { input: 1.00, output: 2.00 }';

export async function startRealClientsHerd(): Promise<RealClientsHerd> {
  const opened: Array<{ close(): Promise<void> }> = [];
  try {
    return await start(opened);
  } catch (error) {
    // Listening servers would keep the test process alive after a failed before().
    await Promise.all(opened.map((thing) => thing.close()));
    throw error;
  }
}

async function start(opened: Array<{ close(): Promise<void> }>): Promise<RealClientsHerd> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-real-clients-'));
  writeNote(dir);
  const handler = () => toolLoopHandler({ calls: toolCalls(dir), finalText });
  const anthropic = await startMockUpstream(handler());
  const responsesRelay = await startMockUpstream(handler());
  const chatRelay = await startMockUpstream(handler());
  const proxy = await startRefusingProxy();
  opened.push(anthropic, responsesRelay, chatRelay, proxy);
  const db = join(dir, 'herd.db');
  const store = await TestKeys.open(db);
  const keys = {} as Record<ClientName, string>;
  for (const name of CLIENT_NAMES) keys[name] = (await store.create({ name, allowedModels: '*' })).secret;
  await store.close();
  // Claude Code's model ids go to the Anthropic upstream (pass-through), Codex's default and gpt-5-codex to the
  // relay's own /responses (pass-through); gpt-4.1 and deepseek-v3.2 have only a chat upstream (bridged).
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
auth: { master_key_env: HERD_TEST_MASTER, db: "${db}" }
billing: { currency: USD, ledger: "sqlite:${db}", flush_interval_ms: 10 }
providers:
  anthropic: { type: anthropic, base_url: "${anthropic.url}", timeout_ms: 20000, retry: { attempts: 1 } }
  responses-relay: { type: openai, base_url: "${responsesRelay.url}/v1", api_key_env: RELAY_API_KEY, endpoints: [responses], timeout_ms: 20000, retry: { attempts: 1 } }
  chat-relay: { type: openai, base_url: "${chatRelay.url}/v1", api_key_env: RELAY_API_KEY, endpoints: [], timeout_ms: 20000, retry: { attempts: 1 } }
models:
  ${CLAUDE_CODE_DEFAULT_MODEL}: { ${price}, deployments: [{ provider: anthropic }] }
  claude-sonnet-5-5: { aliases: [claude-sonnet-4-5], ${price}, deployments: [{ provider: anthropic }] }
  claude-haiku-5-5: { ${price}, deployments: [{ provider: anthropic }] }
  ${CODEX_DEFAULT_MODEL}: { ${price}, deployments: [{ provider: responses-relay }] }
  gpt-5-codex: { ${price}, deployments: [{ provider: responses-relay }] }
  gpt-4.1: { ${price}, deployments: [{ provider: chat-relay }] }
  deepseek-v3.2: { ${price}, deployments: [{ provider: chat-relay, upstream_model: deepseek-chat }] }
`,
    join(dir, 'herd.yaml'),
  );
  const env = { HERD_TEST_MASTER: 'sk-herd-real-clients-master-0123456789', ANTHROPIC_API_KEY: 'sk-upstream-ant-fake', RELAY_API_KEY: 'sk-upstream-relay-fake' };
  const server = await startHerd(config, { env, log: () => undefined });

  async function ledgerRows(key: ClientName, atLeast: number, modelRequested?: string): Promise<LedgerRow[]> {
    const sqlite = new Database(db, { readonly: true });
    try {
      const query = sqlite.prepare(
        'SELECT key_name, model_requested, model, provider, dialect, status FROM ledger_requests WHERE key_name = ? AND (? IS NULL OR model_requested = ?) ORDER BY started_at',
      );
      let rows: LedgerRow[] = [];
      // Bounded: the rows are written within a flush interval or two of the answer.
      for (let i = 0; i < 200; i++) {
        rows = query.all(key, modelRequested ?? null, modelRequested ?? null) as LedgerRow[];
        if (rows.length >= atLeast) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return rows;
    } finally {
      sqlite.close();
    }
  }

  return {
    server,
    url: server.httpUrl,
    openaiBase: `${server.httpUrl}/v1`,
    keys,
    anthropic,
    responsesRelay,
    chatRelay,
    proxy,
    dir,
    ledgerRows,
    close: async () => {
      await server.close();
      await Promise.all([anthropic.close(), responsesRelay.close(), chatRelay.close(), proxy.close()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
