// A Herd with a gateway in front of a local OpenAI-wire upstream, and model repositories holding llm
// models: what the llm backend, ensemble and generate tests run against.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Database from 'better-sqlite3';
import { startHerd, type HerdServer } from '../../../src/app.ts';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { openAIChunk, openAICompletion } from '../../gateway/helpers/gateway-fixtures.ts';
import { encodeSse, pause, sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from '../../gateway/helpers/mock-upstream.ts';

export interface ChatBody {
  model: string;
  stream?: boolean;
  max_tokens?: number;
  temperature?: number;
  messages: { role: string; content: string }[];
}

/**
 * Answers `echo(<upstream model>): <last user message>`; streams it word by word; `fail-*` upstream models answer 500;
 * `hold-*` ones never answer a non-streaming call (a caller that leaves closes it: counted in closedEarly).
 */
export async function startFakeUpstream(options: { frameDelayMs?: number } = {}): Promise<MockUpstream & { closedEarly: number; holding: number }> {
  const state = { closedEarly: 0, holding: 0 };
  const upstream = await startMockUpstream(async (req: RecordedRequest, res: ServerResponse, raw: IncomingMessage) => {
    const body = req.body as ChatBody;
    if (body.model.startsWith('fail')) {
      sendJson(res, 500, { error: { message: 'upstream exploded', type: 'server_error' } });
      return;
    }
    const text = `echo(${body.model}): ${body.messages.at(-1)?.content ?? ''}`;
    if (!body.stream && body.model.startsWith('hold')) {
      state.holding += 1;
      raw.socket.on('close', () => {
        state.holding -= 1;
        state.closedEarly += 1;
      });
      return;
    }
    if (!body.stream) {
      sendJson(res, 200, openAICompletion(body.model, text));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let closed = false;
    // The socket, as the provider tests watch it: an aborted upstream request closes its connection.
    raw.socket.on('close', () => {
      if (!res.writableFinished) {
        closed = true;
        state.closedEarly += 1;
      }
    });
    const words = text.split(' ');
    res.write(encodeSse([{ data: openAIChunk(body.model, { role: 'assistant', content: '' }) }]));
    for (const [i, word] of words.entries()) {
      if (closed) return;
      res.write(encodeSse([{ data: openAIChunk(body.model, { content: i === 0 ? word : ` ${word}` }) }]));
      if (options.frameDelayMs) await pause(options.frameDelayMs);
    }
    if (closed) return;
    res.write(encodeSse([{ data: openAIChunk(body.model, {}, 'stop') }]));
    res.write(
      encodeSse([
        {
          data: {
            id: 'chatcmpl-s',
            object: 'chat.completion.chunk',
            created: 1,
            model: body.model,
            choices: [],
            usage: { prompt_tokens: 9, completion_tokens: words.length, total_tokens: 9 + words.length },
          },
        },
      ]),
    );
    res.end(encodeSse([{ data: '[DONE]' }]));
  });
  // A getter, not a copy: Object.assign would read the count once.
  Object.defineProperty(upstream, 'holding', { get: () => state.holding });
  return Object.defineProperty(upstream, 'closedEarly', { get: () => state.closedEarly }) as MockUpstream & { closedEarly: number; holding: number };
}

export interface RepositoryModel {
  config: string;
  model?: string;
}

export function writeModels(models: Record<string, RepositoryModel>): string {
  const dir = mkdtempSync(join(tmpdir(), 'herd-llm-'));
  for (const [name, m] of Object.entries(models)) {
    mkdirSync(join(dir, name, '1'), { recursive: true });
    writeFileSync(join(dir, name, 'config.pbtxt'), m.config);
    if (m.model) writeFileSync(join(dir, name, '1', 'model.mjs'), m.model);
  }
  return dir;
}

export function llmModel(name: string, options: { model?: string; decoupled?: boolean; count?: number; extra?: string } = {}): RepositoryModel {
  return {
    config:
      `name: "${name}"\nbackend: "llm"\nmax_batch_size: 0\n` +
      `instance_group [ { kind: KIND_CPU count: ${options.count ?? 4} } ]\n` +
      (options.decoupled ? 'model_transaction_policy { decoupled: true }\n' : '') +
      `parameters [ { key: "model" value: { string_value: "${options.model ?? 'balanced'}" } },\n` +
      `  { key: "system_prompt" value: { string_value: "You are terse." } }${options.extra ?? ''} ]\n`,
  };
}

export interface GatewayHerd {
  server: HerdServer;
  upstream: MockUpstream & { closedEarly: number; holding: number };
  ledgerPath: string;
  /** Ledger request rows written so far (flushed every 50 ms, and on close). */
  ledgerRows(): Record<string, unknown>[];
  /** Polls (bounded) until the ledger holds `count` request rows. */
  waitForLedgerRows(count: number): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

/** Tiers fast/balanced/quality on one upstream; `balanced` falls back to `quality` when its upstream fails. */
export async function startGatewayHerd(repositories: string[], options: { providerKey?: boolean; frameDelayMs?: number; balancedUpstream?: string } = {}): Promise<GatewayHerd> {
  const upstream = await startFakeUpstream({ frameDelayMs: options.frameDelayMs });
  const dir = mkdtempSync(join(tmpdir(), 'herd-llm-gw-'));
  const ledgerPath = join(dir, 'ledger.db');
  const config = parseHerdConfig(
    `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }
serving: { model_repository: [${repositories.map((r) => JSON.stringify(r)).join(', ')}], identity: smart-chat-service }
auth: { db: "${join(dir, 'keys.db')}" }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:${ledgerPath}", flush_interval_ms: 50 }
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: FAKE_RELAY_KEY, exchange_rate: 1.0, timeout_ms: 5000, retry: { attempts: 1 } }
models:
  fast-model: { price: { input: 0.1, output: 0.2 }, deployments: [{ provider: relay, upstream_model: fast-up }] }
  balanced-model: { price: { input: 1, output: 2 }, deployments: [{ provider: relay, upstream_model: ${options.balancedUpstream ?? 'balanced-up'} }], fallbacks: [quality-model] }
  quality-model: { price: { input: 3, output: 15 }, deployments: [{ provider: relay, upstream_model: quality-up }] }
routes:
  tiers: { fast: fast-model, balanced: balanced-model, quality: quality-model }
`,
    join(dir, 'herd.yaml'),
  );
  const env = options.providerKey === false ? {} : { FAKE_RELAY_KEY: 'sk-fake-relay' };
  const server = await startHerd(config, { env });
  let closed = false;
  const herd: GatewayHerd = {
    server,
    upstream,
    ledgerPath,
    ledgerRows() {
      const db = new Database(ledgerPath, { readonly: true });
      try {
        return db.prepare('SELECT * FROM ledger_requests ORDER BY started_at').all() as Record<string, unknown>[];
      } finally {
        db.close();
      }
    },
    async waitForLedgerRows(count) {
      for (let i = 0; i < 200; i++) {
        const rows = existsSync(ledgerPath) ? herd.ledgerRows() : [];
        if (rows.length >= count) return rows;
        await pause(25);
      }
      throw new Error(`the ledger never reached ${count} request rows`);
    },
    async close() {
      if (closed) return;
      closed = true;
      await server.close();
      await upstream.close();
    },
  };
  return herd;
}
