// Security basics through the real server: repeated incorrect keys from one address get 429 with
// Retry-After while other addresses carry on; admin routes refuse client keys; no key, Authorization
// header or provider secret reaches a log line, an error, a metric or a ledger row; every route has a
// body limit (413 in OpenAI's shape on the gateway, 400 in Triton's on KServe); and no client header
// reaches a provider (fake upstreams record what they receive).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { TestKeys } from '../helpers/test-keys.ts';
import { anthropicMessage, openAICompletion, openAIStreamFrames } from '../gateway/helpers/gateway-fixtures.ts';
import { encodeSse, sendJson, startMockUpstream, type MockUpstream, type RecordedRequest } from '../gateway/helpers/mock-upstream.ts';
import { TRITON_MODEL_REPOSITORY } from '../triton-testdata.ts';

const MASTER = 'sk-herd-security-master-7f3a9c1e5b2d4f6a8c0e';
const UPSTREAM_SECRETS = {
  SEC_OPENAI_KEY: 'sk-upstream-openai-91b2c3d4e5f6',
  SEC_ANTHROPIC_KEY: 'sk-ant-upstream-a1b2c3d4e5f6',
  SEC_GEMINI_KEY: 'AIzaSy-upstream-gemini-0f9e8d7c',
};
const GUESSED_KEY = 'sk-herd-GuessedButWrong0123456789abcdefghijklmnopq';
const OTHER_SCHEME = 'Basic c2VjcmV0LXVzZXI6c2VjcmV0LXBhc3N3b3Jk';
const MAX_INPUT = 16 * 1024;
const CLI = resolve('src/cli/herd.ts');

interface Herd {
  httpUrl: string;
  metricsUrl: string;
  child: ChildProcess;
  /** Everything it printed, stdout and stderr. */
  output: () => string;
  close(): Promise<void>;
}

/** `herd serve` as an operator runs it, so every line it prints (start-up, warnings, errors) is captured. */
async function startHerdProcess(config: string, env: Record<string, string>): Promise<Herd> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const [httpUrl, metricsUrl] = await new Promise<[string, string]>((ok, fail) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const http = /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/.exec(out);
      const metrics = /Started Metrics Service at \S+ \((http:\/\/[^)]+)\/metrics\)/.exec(out);
      if (http && metrics) ok([http[1] as string, metrics[1] as string]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => fail(new Error(`herd exited before starting: ${out}`)));
  });
  return {
    httpUrl,
    metricsUrl,
    child,
    output: () => out,
    close: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** node:http, so the client address (localAddress) can be chosen: 127.0.0.2 is another machine to the server. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: Buffer | string; from?: string }): Promise<Answer> {
  const target = new URL(url);
  return new Promise((done, fail) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'GET',
        headers: options.headers,
        localAddress: options.from ?? '127.0.0.1',
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', fail);
    req.end(options.body);
  });
}

function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', () => undefined);
    socket.on('close', () => done(Buffer.concat(chunks).toString('utf8')));
    socket.end(bytes);
  });
}

const chatBody = (model: string, stream = false) => JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], stream, max_tokens: 5 });

describe('gateway security', () => {
  let dir = '';
  let server: Herd;
  let userKey = '';
  const upstreams: Record<'openai' | 'anthropic' | 'gemini', MockUpstream> = {} as never;
  /** When set, the OpenAI upstream answers this status with an error body echoing the key it was sent, as OpenAI does. */
  let openaiFailure: number | undefined;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herd-security-'));
    upstreams.openai = await startMockUpstream((req, res) => {
      if (openaiFailure !== undefined) {
        const sent = String(req.headers.authorization ?? '');
        sendJson(res, openaiFailure, {
          error: {
            message: `Incorrect API key provided: ${sent.replace('Bearer ', '')}. Headers: ${JSON.stringify(req.headers)}`,
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        });
        return;
      }
      if ((req.body as { stream?: boolean }).stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(encodeSse([...openAIStreamFrames('gpt-test', ['hi', ' there']), { data: '[DONE]' }]));
      } else sendJson(res, 200, openAICompletion('gpt-test', 'hi there'));
    });
    upstreams.anthropic = await startMockUpstream((_req, res) => sendJson(res, 200, anthropicMessage('claude-test', 'hello')));
    upstreams.gemini = await startMockUpstream((_req, res) =>
      sendJson(res, 200, {
        candidates: [{ content: { parts: [{ text: 'hello' }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 },
      }),
    );
    const store = await TestKeys.open(join(dir, 'keys.db'));
    userKey = (await store.create({ name: 'team-a', allowedModels: '*' })).secret;
    await store.close();
    const config = join(dir, 'herd.yaml');
    writeFileSync(
      config,
      `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, http_max_input_size: ${MAX_INPUT} }
serving: { model_repository: ["${TRITON_MODEL_REPOSITORY}"], model_control_mode: explicit, load_model: [simple] }
auth: { master_key_env: SEC_MASTER, db: "${join(dir, 'keys.db')}", failed_keys: { max_per_address: 3, window_s: 60 } }
billing: { currency: USD, ledger: "sqlite:${join(dir, 'ledger.db')}", flush_interval_ms: 10 }
providers:
  up-openai: { type: openai, base_url: "${upstreams.openai.url}/v1", api_key_env: SEC_OPENAI_KEY, headers: { x-team: herd }, timeout_ms: 2000, retry: { attempts: 1 } }
  up-anthropic: { type: anthropic, base_url: "${upstreams.anthropic.url}", api_key_env: SEC_ANTHROPIC_KEY, timeout_ms: 2000, retry: { attempts: 1 } }
  up-gemini: { type: gemini, base_url: "${upstreams.gemini.url}", api_key_env: SEC_GEMINI_KEY, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  gpt-test: { price: { input: 1, output: 2 }, deployments: [{ provider: up-openai }] }
  claude-test: { price: { input: 1, output: 2 }, deployments: [{ provider: up-anthropic }] }
  gemini-test: { price: { input: 1, output: 2 }, deployments: [{ provider: up-gemini }] }
`,
    );
    server = await startHerdProcess(config, { SEC_MASTER: MASTER, ...UPSTREAM_SECRETS });
  });

  after(async () => {
    await server?.close();
    for (const upstream of Object.values(upstreams)) await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const chat = (key: string | undefined, model: string, extra: Record<string, string> = {}, from?: string) =>
    send(`${server.httpUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...extra },
      body: chatBody(model),
      ...(from === undefined ? {} : { from }),
    });

  it('repeated incorrect keys from one address get 429 with Retry-After, even for a right key; other addresses carry on', async () => {
    const guesser = '127.0.0.2';
    for (let i = 0; i < 3; i++) assert.equal((await chat(`${GUESSED_KEY}${i}`, 'gpt-test', {}, guesser)).status, 401);
    const refused = await chat(userKey, 'gpt-test', {}, guesser);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1 && Number(refused.headers['retry-after']) <= 60, `Retry-After ${refused.headers['retry-after']}`);
    const error = (JSON.parse(refused.body) as { error: { code: string; message: string } }).error;
    assert.equal(error.code, 'rate_limit_exceeded');
    assert.match(error.message, /incorrect API key from this address/);
    // The framework path (GET /v1/models) and the admin route share the refusal.
    assert.equal((await send(`${server.httpUrl}/v1/models`, { headers: { authorization: `Bearer ${userKey}` }, from: guesser })).status, 429);
    assert.equal((await send(`${server.httpUrl}/admin/usage`, { headers: { authorization: `Bearer ${MASTER}` }, from: guesser })).status, 429);
    // Another client, with the same key, is not affected.
    assert.equal((await chat(userKey, 'gpt-test', {}, '127.0.0.3')).status, 200);
    assert.equal((await chat(userKey, 'gpt-test')).status, 200);
  });

  it('admin endpoints refuse client keys (403), want a key (401), and answer the master key', async () => {
    const asUser = await send(`${server.httpUrl}/admin/usage`, { headers: { authorization: `Bearer ${userKey}` } });
    assert.equal(asUser.status, 403);
    assert.equal((JSON.parse(asUser.body) as { error: { code: string } }).error.code, 'insufficient_permissions');
    assert.equal((await send(`${server.httpUrl}/admin/usage`, {})).status, 401);
    assert.equal((await send(`${server.httpUrl}/admin/usage`, { headers: { authorization: `Bearer ${MASTER}` } })).status, 200);
  });

  it('no client header reaches a provider: only the configured auth and extra headers are sent, CR/LF injection included', async () => {
    const hostile = {
      'x-api-key': 'client-x-api-key-value',
      'x-goog-api-key': 'client-goog-key-value',
      'anthropic-version': 'client-anthropic-version',
      'authorization-extra': 'client-authorization-extra',
      'openai-organization': 'client-org-value',
      'openai-project': 'client-project-value',
      cookie: 'session=client-cookie-value',
      'x-forwarded-for': 'client-forwarded-value',
      'x-team': 'client-team-value',
    };
    for (const upstream of Object.values(upstreams)) upstream.requests.length = 0;
    for (const model of ['gpt-test', 'claude-test', 'gemini-test']) assert.equal((await chat(MASTER, model, hostile)).status, 200, model);
    // Raw bytes: a header value with a bare CR, and an obs-fold continuation line, either of which could smuggle a header upstream.
    const port = Number(new URL(server.httpUrl).port);
    const body = chatBody('gpt-test');
    for (const smuggle of ['X-Other: b\rx-injected-cr: client-cr-value', 'X-Note: a\r\n x-injected-fold: client-fold-value']) {
      const raw = await rawExchange(
        port,
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${MASTER}\r\nContent-Type: application/json\r\n${smuggle}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      assert.match(raw, /^HTTP\/1\.1 400 /, JSON.stringify(smuggle));
    }
    const seen: RecordedRequest[] = [...upstreams.openai.requests, ...upstreams.anthropic.requests, ...upstreams.gemini.requests];
    assert.ok(seen.length >= 3);
    for (const recorded of seen) {
      const headers = JSON.stringify(recorded.headers);
      assert.doesNotMatch(headers, /client-|injected/, `an upstream received a client header: ${headers}`);
      assert.doesNotMatch(headers, new RegExp(MASTER), 'the client key went upstream');
    }
    const [openai] = upstreams.openai.requests;
    assert.equal(openai?.headers.authorization, `Bearer ${UPSTREAM_SECRETS.SEC_OPENAI_KEY}`);
    assert.equal(openai?.headers['x-team'], 'herd');
    assert.equal(upstreams.anthropic.requests[0]?.headers['x-api-key'], UPSTREAM_SECRETS.SEC_ANTHROPIC_KEY);
    assert.equal(upstreams.gemini.requests[0]?.headers['x-goog-api-key'], UPSTREAM_SECRETS.SEC_GEMINI_KEY);
  });

  it('every route has a body limit: 413 in OpenAI shape on the gateway, 400 in Triton shape on KServe', async () => {
    const big = Buffer.alloc(MAX_INPUT + 1, 0x20);
    const auth = { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' };
    const gatewayCases: { name: string; headers: Record<string, string>; body: Buffer }[] = [
      { name: 'known length', headers: auth, body: big },
      { name: 'chunked', headers: { ...auth, 'transfer-encoding': 'chunked' }, body: big },
      { name: 'gzip that inflates past the limit', headers: { ...auth, 'content-encoding': 'gzip' }, body: gzipSync(Buffer.alloc(MAX_INPUT * 8, 0x20)) },
    ];
    for (const { name, headers, body } of gatewayCases) {
      const answer = await send(`${server.httpUrl}/v1/chat/completions`, { method: 'POST', headers, body });
      assert.equal(answer.status, 413, `${name}: ${answer.body}`);
      assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'request_too_large', name);
    }
    for (const path of [
      '/v2/models/simple/infer',
      '/v2/models/simple/generate',
      '/v2/repository/models/simple/load',
      '/v2/systemsharedmemory/region/r/register',
      '/admin/usage',
      '/v1/models',
    ]) {
      const answer = await send(`${server.httpUrl}${path}`, { method: 'POST', headers: auth, body: big });
      assert.ok([400, 404, 405, 413].includes(answer.status), `${path}: ${answer.status}`);
      if (path.startsWith('/v2/')) {
        assert.equal(answer.status, 400, `${path}: ${answer.body}`);
        assert.match((JSON.parse(answer.body) as { error: string }).error, /exceeds the maximum input size/);
      }
    }
  });

  it('no key, Authorization header or provider secret in any log line, error, metric or ledger row', async () => {
    // Requests that carry every secret, including failures whose upstream error body echoes the provider key.
    const answers: Answer[] = [];
    answers.push(await chat(MASTER, 'gpt-test'), await chat(userKey, 'claude-test'), await chat(userKey, 'gemini-test'));
    answers.push(await chat(GUESSED_KEY, 'gpt-test', {}, '127.0.0.4'), await send(`${server.httpUrl}/v1/models`, { headers: { authorization: OTHER_SCHEME } }));
    answers.push(
      await send(`${server.httpUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
        body: '{"model": "gpt-test", "messages": [',
      }),
    );
    for (const status of [401, 500, 400]) {
      openaiFailure = status;
      try {
        answers.push(await chat(userKey, 'gpt-test'));
        answers.push(
          await send(`${server.httpUrl}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${userKey}`, 'content-type': 'application/json' },
            body: chatBody('gpt-test', true),
          }),
        );
      } finally {
        openaiFailure = undefined;
      }
    }
    assert.ok(
      answers.some((a) => a.status >= 500),
      'an upstream failure was answered',
    );
    answers.push(await send(`${server.httpUrl}/health`, {}), await send(`${server.httpUrl}/admin/usage?by=key`, { headers: { authorization: `Bearer ${MASTER}` } }));
    await new Promise((resolve) => setTimeout(resolve, 100)); // the ledger flushes every 10 ms
    const metrics = await (await fetch(`${server.metricsUrl}/metrics`)).text();
    const ledger = new Database(join(dir, 'ledger.db'), { readonly: true });
    const tables = ledger.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    const rows = tables.map(({ name }) => JSON.stringify(ledger.prepare(`SELECT * FROM "${name}"`).all()));
    ledger.close();
    assert.ok(rows.join('').includes('gpt-test'), 'the ledger holds the requests');
    await server.close(); // its shutdown lines are part of the log too
    const places: Record<string, string> = {
      logs: server.output(),
      answers: answers.map((a) => JSON.stringify(a)).join('\n'),
      metrics,
      ledger: rows.join('\n'),
    };
    const secrets = [MASTER, userKey, GUESSED_KEY, OTHER_SCHEME, OTHER_SCHEME.split(' ')[1] as string, ...Object.values(UPSTREAM_SECRETS)];
    for (const [place, text] of Object.entries(places)) {
      for (const secret of secrets) assert.ok(!text.includes(secret), `${place} contain the secret ${secret.slice(0, 12)}…`);
    }
  });
});
