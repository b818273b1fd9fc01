// A real Herd for the console tests: a temp SQLite key store and ledger, a fake OpenAI upstream, a tiny built
// console (index.html + assets/app-x.js) in a temp dir, 127.0.0.2 as the trusted proxy, and a raw HTTP client
// that can pick its source address (127.0.0.x) and send paths unnormalized.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HerdServer, startHerd } from '../../../src/app.ts';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { type MockUpstream, sendJson, startMockUpstream } from '../../gateway/helpers/mock-upstream.ts';

export const MASTER = 'sk-herd-master-key-for-the-console-tests-0123456789';
export const INDEX_HTML = '<!doctype html><html><head><script type="module" src="./assets/app-x.js"></script></head><body></body></html>\n';
export const APP_JS = 'console.log("console");\n';

/** A built console in a temp dir: what scripts/build-ui.mjs writes, in miniature. */
export function writeConsoleFixture(): string {
  const root = join(mkdtempSync(join(tmpdir(), 'herd-console-ui-')), 'ui');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), INDEX_HTML);
  writeFileSync(join(root, 'assets', 'app-x.js'), APP_JS);
  return root;
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json(): Record<string, unknown>;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** The client's source address (127.0.0.x); default 127.0.0.1. */
  from?: string;
}

export async function send(base: string, path: string, options: RequestOptions = {}): Promise<Answer> {
  const url = new URL(base);
  const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: options.method ?? 'GET',
        localAddress: options.from ?? '127.0.0.1',
        agent: false,
        headers: { ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `herd_session=<id>` from a Set-Cookie answer, for the next request's Cookie header. */
export function cookieOf(answer: Answer): string {
  const set = answer.headers['set-cookie']?.[0] ?? '';
  const value = /^herd_session=([^;]*)/.exec(set)?.[1];
  if (!value) throw new Error(`no session cookie in ${JSON.stringify(answer.headers)}`);
  return `herd_session=${value}`;
}

export interface ConsoleTestServer {
  herd: HerdServer;
  upstream: MockUpstream;
  url: string;
  /** The server's temp dir: keys.db (the key store, audit and sessions) and ledger.db. */
  dir: string;
  close(): Promise<void>;
}

export async function startConsoleTestServer(extraYaml = '', consoleRoot: string = writeConsoleFixture()): Promise<ConsoleTestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-console-e2e-'));
  const upstream = await startMockUpstream((_req, res) =>
    sendJson(res, 200, {
      id: 'c-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4.1',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
    }),
  );
  const yaml = `
server:
  host: 127.0.0.1
  http_port: 0
  grpc_port: 0
  metrics_port: 0
  allow_grpc: false
  trusted_proxies: [127.0.0.2/32]
  ui: { sign_in_failures: { max: 3, window_secs: 300 } }
auth: { master_key_env: HERD_CONSOLE_TEST_MASTER, db: ./keys.db }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:./ledger.db", flush_interval_ms: 20 }
providers:
  relay: { type: openai, base_url: "${upstream.url}/v1", api_key_env: RELAY_API_KEY }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }]
${extraYaml}`;
  const herd = await startHerd(parseHerdConfig(yaml, join(dir, 'herd.yaml')), { env: { HERD_CONSOLE_TEST_MASTER: MASTER, RELAY_API_KEY: 'sk-up' }, consoleRoot });
  return {
    herd,
    upstream,
    url: herd.httpUrl,
    dir,
    async close() {
      await herd.close();
      await upstream.close();
    },
  };
}
