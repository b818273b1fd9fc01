// A Herd for the upstream batch end-to-end tests: CNY settlement (USD at 7.3), an OpenAI-type relay at ¥1 per list
// dollar and an Anthropic provider at ¥7.3 (their base_urls the fake batch APIs or a realtime mock), an in-process
// Triton model, keys alice and bob, the worker on with short upstream polls, and the ledger open read-only beside it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import OpenAI, { toFile } from 'openai';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { TestKeys } from '../helpers/test-keys.ts';

export const UPSTREAM_MASTER = 'sk-herd-master-key-for-the-upstream-batch-tests-0123';
export const RELAY_KEY = 'sk-upstream-relay-batch';
export const ANTHROPIC_KEY = 'sk-upstream-anthropic-batch';
const TRITON_FIXTURES = resolve('test/fixtures/triton_provider_repository');

export interface UpstreamHerdOptions {
  /** The relay's base_url (ends in /v1) and the Anthropic provider's. */
  relayUrl: string;
  anthropicUrl: string;
  /** batch.deadline; default: the schema's (expire, 1 h before expires_at). */
  deadline?: { policy: 'expire' | 'realtime'; marginMs: number };
  /** Load the in-process Triton model `local-text` (echo_text). */
  triton?: boolean;
}

export interface UpstreamHerd {
  server: HerdServer;
  keys: Record<'alice' | 'bob', string>;
  /** The ledger database, read-only (rows are read as the flush writes them). */
  ledger: Database.Database;
  close(): Promise<void>;
}

/**
 * An upstream batch goes up when it holds batch.upstream.max_lines (4) lines: the scenarios send lines in fours, so
 * which client batches share an upstream batch never depends on how fast the SDK calls are (max_wait_ms is large).
 */
export async function startUpstreamHerd(prefix: string, options: UpstreamHerdOptions): Promise<UpstreamHerd> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = join(dir, 'herd.db');
  const deadline = options.deadline === undefined ? '' : `  deadline: { policy: ${options.deadline.policy}, margin_ms: ${options.deadline.marginMs} }`;
  const serving = options.triton === true ? `serving: { model_repository: ["${TRITON_FIXTURES}"], model_control_mode: explicit, load_model: [echo_text] }` : '';
  const local = options.triton === true ? '  local: { type: triton, timeout_ms: 5000, retry: { attempts: 1 } }' : '';
  const localModel = options.triton === true ? '  local-text: { price: { input: 1, output: 2 }, deployments: [{ provider: local, upstream_model: echo_text }] }' : '';
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
${serving}
auth: { master_key_env: HERD_UPSTREAM_MASTER, db: "${db}" }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:${db}", flush_interval_ms: 10 }
batch:
  worker: { enabled: true, interval_ms: 20 }
  upstream: { max_lines: 4, max_wait_ms: 600000, poll_min_ms: 50, poll_max_ms: 200 }
${deadline}
providers:
  relay: { type: openai, base_url: "${options.relayUrl}", api_key_env: RELAY_KEY, exchange_rate: 1, timeout_ms: 5000, retry: { attempts: 1 } }
  anthropic: { type: anthropic, base_url: "${options.anthropicUrl}", api_key_env: ANTHROPIC_KEY, exchange_rate: 7.3, timeout_ms: 5000, retry: { attempts: 1 } }
${local}
models:
  gpt-4.1: { price: { input: 2, output: 8 }, deployments: [{ provider: relay }] }
  gpt-4.1-mini: { price: { input: 0.4, output: 1.6 }, deployments: [{ provider: relay }] }
  claude-sonnet-4-5: { price: { input: 3, output: 15 }, deployments: [{ provider: anthropic }] }
${localModel}
`,
    join(dir, 'herd.yaml'),
  );
  const server = await startHerd(config, { env: { RELAY_KEY, ANTHROPIC_KEY, HERD_UPSTREAM_MASTER: UPSTREAM_MASTER }, log: () => {} });
  const testKeys = await TestKeys.open(`sqlite:${db}`);
  const keys = {
    alice: (await testKeys.create({ name: 'alice', allowedModels: '*' })).secret,
    bob: (await testKeys.create({ name: 'bob', allowedModels: '*' })).secret,
  };
  await testKeys.close();
  const ledger = new Database(db, { readonly: true });
  return {
    server,
    keys,
    ledger,
    async close() {
      ledger.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until `done` holds (liveness, not speed: what never happens fails after 30 s). */
export async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() - started > 30_000) throw new Error(`still not done: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export interface OutputLine {
  custom_id: string;
  response: { status_code: number; request_id: string; body: { choices: { message: { content: string } }[] } } | null;
  error: { code: string } | null;
}

export const messagesOf = (content: string) => [{ role: 'user' as const, content }];
export const chatLine = (customId: string, content: string, model: string) =>
  `${JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model, messages: messagesOf(content), max_tokens: 50 } })}\n`;
/** USD 7.3 per CNY unit: what a row's true USD is from its CNY cost. */
export const toUsd = (cnyMicros: number) => Math.round(cnyMicros / 7.3);

/** Uploads `lines` ([custom_id, text]) for `model` and creates the batch, as a client with `key` would. */
export async function submitChatBatch(baseUrl: string, key: string, model: string, lines: [string, string][]) {
  const client = new OpenAI({ apiKey: key, baseURL: `${baseUrl}/v1`, maxRetries: 0 });
  const text = lines.map(([id, content]) => chatLine(id, content, model)).join('');
  const file = await client.files.create({ file: await toFile(Buffer.from(text), 'in.jsonl'), purpose: 'batch' });
  const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
  return { client, batch };
}

export async function readOutput(client: OpenAI, fileId: string | null | undefined): Promise<OutputLine[]> {
  assert.ok(fileId, 'the batch has the file');
  const text = await (await client.files.content(fileId)).text();
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as OutputLine);
}
