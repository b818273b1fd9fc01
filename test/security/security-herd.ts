// The real server for test/security: startHerd (as `herd serve` runs it) with one OpenAI-compatible fake
// upstream model, on free ports, its log lines collected; and a node:http client that picks its source
// address (127.0.0.2 is a different client address, though still loopback to Herd).
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { herdConfigSchema } from '../../src/config/herd-config-schema.ts';
import { openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { sendJson, startMockUpstream, type MockUpstream } from '../gateway/helpers/mock-upstream.ts';

export interface SecurityHerd {
  server: HerdServer;
  upstream: MockUpstream;
  /** Every log line Herd wrote, as its sink received it. */
  logs: string[];
  /** The key store's file, for tests that add keys. */
  keyDb: string;
  close(): Promise<void>;
}

export const UPSTREAM_KEY = 'sk-upstream-security-0a1b2c3d4e5f';

export async function startSecurityHerd(
  options: { server?: Record<string, unknown>; auth?: Record<string, unknown>; masterKey?: string; keyDb?: string } = {},
): Promise<SecurityHerd> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-security-'));
  const upstream = await startMockUpstream((req, res) => sendJson(res, 200, openAICompletion(String((req.body as { model?: unknown }).model), 'hello')));
  const keyDb = options.keyDb ?? join(dir, 'keys.db');
  const config = herdConfigSchema.parse({
    server: { host: '127.0.0.1', http_port: 0, grpc_port: 0, metrics_port: 0, allow_grpc: false, ...options.server },
    auth: { db: keyDb, master_key_env: 'SEC_MASTER_KEY', ...options.auth },
    billing: { ledger: 'off' },
    providers: { fake: { type: 'openai', base_url: `${upstream.url}/v1`, api_key_env: 'SEC_UPSTREAM_KEY' } },
    models: { 'gpt-test': { price: { input: 1, output: 1 }, deployments: [{ provider: 'fake' }] } },
  });
  const logs: string[] = [];
  const env: NodeJS.ProcessEnv = { SEC_UPSTREAM_KEY: UPSTREAM_KEY, ...(options.masterKey ? { SEC_MASTER_KEY: options.masterKey } : {}) };
  const server = await startHerd(config, { env, log: (line) => logs.push(line) });
  return {
    server,
    upstream,
    logs,
    keyDb,
    async close() {
      await server.close();
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request over node:http from `from` (a local source address), so tests choose the client address. */
export function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer; from?: string } = {}): Promise<Answer> {
  const target = new URL(url);
  return new Promise((done, fail) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
        headers: options.headers,
        agent: false,
        ...(options.from ? { localAddress: options.from } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', fail);
      },
    );
    req.on('error', fail);
    req.end(options.body);
  });
}

export function chat(herd: SecurityHerd, headers: Record<string, string> = {}, from?: string, model = 'gpt-test'): Promise<Answer> {
  return send(`${herd.server.httpUrl}/v1/chat/completions`, {
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    ...(from ? { from } : {}),
  });
}
