// Fuzz target for the HTTP front ends (the fast infer, chat and generate paths, and Fastify behind them):
// the real server on a free port, fed mutated request bytes on raw sockets. Invariant: every connection
// gets a well-formed answer that is not a 500, or is closed; no input hangs; the server stays healthy.
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startHerd, type HerdServer } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';
import { openAICompletion, openAIStreamFrames } from '../gateway/helpers/gateway-fixtures.ts';
import { encodeSse, sendJson, startMockUpstream } from '../gateway/helpers/mock-upstream.ts';
import { TRITON_MODEL_REPOSITORY } from '../triton-testdata.ts';
import type { FuzzTarget } from './fuzz-target.ts';
import { fuzzBytes, mutatedJsonValue } from './mutate-bytes.ts';

export const FUZZ_MASTER_KEY = 'sk-herd-fuzz-master-0123456789abcdef';
/** Requests stop at this size, so the server's memory stays bounded by it per connection. */
const MAX_INPUT_SIZE = 64 * 1024;

interface RequestSample {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Real requests for each front end: what clients send to the infer, generate and chat fast paths. */
export function httpRequestSamples(): RequestSample[] {
  const input = (name: string) => ({ name, datatype: 'INT32', shape: [1, 16], data: Array.from({ length: 16 }, (_, i) => i) });
  const json = Buffer.from(
    JSON.stringify({
      inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } }, input('INPUT1')],
      outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
    }),
  );
  const binary = Buffer.concat([json, Buffer.from(new Int32Array(16).fill(7).buffer)]);
  const chat = (stream: boolean) => Buffer.from(JSON.stringify({ model: 'fuzz-model', messages: [{ role: 'user', content: 'hi' }], stream, max_tokens: 8 }));
  const auth = { Authorization: `Bearer ${FUZZ_MASTER_KEY}` };
  return [
    { path: '/v2/models/simple/infer', headers: {}, body: Buffer.from(JSON.stringify({ id: '1', inputs: [input('INPUT0'), input('INPUT1')] })) },
    { path: '/v2/models/simple/versions/1/infer', headers: { 'Inference-Header-Content-Length': String(json.length) }, body: binary },
    { path: '/v2/models/simple/generate', headers: {}, body: Buffer.from(JSON.stringify({ INPUT0: Array(16).fill(1), INPUT1: Array(16).fill(2) })) },
    { path: '/v1/chat/completions', headers: auth, body: chat(false) },
    { path: '/v1/chat/completions', headers: auth, body: chat(true) },
    { path: '/v2/repository/index', headers: {}, body: Buffer.from('{}') },
  ];
}

/** A request as bytes on the wire, with a Content-Length that matches its body. */
function frame(sample: RequestSample, body: Buffer): Buffer {
  const lines = [
    `POST ${sample.path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Content-Type: application/json',
    `Content-Length: ${body.length}`,
    ...Object.entries(sample.headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}

/**
 * Two kinds of input: the whole request mutated (request line, headers and framing included), and only
 * the body mutated with its Content-Length kept right, so the bytes get past HTTP parsing into the fast paths.
 */
function httpInputs(): fc.Arbitrary<Buffer> {
  const samples = httpRequestSamples();
  const wire = [
    ...samples.map((s) => frame(s, s.body)),
    Buffer.from('GET /v2/health/ready HTTP/1.1\r\nHost: x\r\n\r\nGET /v2/models/simple/config HTTP/1.1\r\nHost: x\r\n\r\n'),
    Buffer.from('POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n'),
  ];
  const bodyOnly = fc.nat({ max: samples.length - 1 }).chain((i) => {
    const sample = samples[i] as RequestSample;
    return fuzzBytes([sample.body], 2048).map((body) => frame(sample, body));
  });
  // Valid JSON of the wrong shape reaches past the decoders: scheduling, the backend, the gateway's routing.
  const jsonSamples = samples.filter((s) => s.headers['Inference-Header-Content-Length'] === undefined);
  const jsonBody = fc.nat({ max: jsonSamples.length - 1 }).chain((i) => {
    const sample = jsonSamples[i] as RequestSample;
    return mutatedJsonValue([JSON.parse(sample.body.toString())]).map((value) => frame(sample, Buffer.from(JSON.stringify(value) ?? '')));
  });
  return fc.oneof(fuzzBytes(wire, 2048), bodyOnly, jsonBody);
}

interface Exchange {
  bytes: Buffer;
  /** The connection ended before any answer (a clean close, also allowed). */
  closedSilently: boolean;
}

/** Writes `bytes`, half-closes, and reads until the server closes; undefined if it never does within `hangMs`. */
function exchange(port: number, bytes: Buffer, hangMs: number): Promise<Exchange | undefined> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      done(undefined);
    }, hangMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      done({ bytes: all, closedSilently: all.length === 0 });
    });
    socket.end(bytes);
  });
}

/** Every status line in what came back (pipelined requests get several answers). */
function statuses(bytes: Buffer): number[] {
  return [...bytes.toString('latin1').matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
}

export function httpTarget(): FuzzTarget {
  return {
    name: 'HTTP front ends (raw sockets)',
    async open() {
      const upstream = await startMockUpstream((req, res) => {
        const body = req.body as { stream?: boolean } | undefined;
        if (body?.stream === true) {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.end(encodeSse([...openAIStreamFrames('fuzz-model', ['a', 'b']), { data: '[DONE]' }]));
        } else sendJson(res, 200, openAICompletion('fuzz-model', 'ok'));
      });
      const dir = mkdtempSync(join(tmpdir(), 'herd-fuzz-http-'));
      const log: string[] = [];
      const config = parseHerdConfig(
        `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, http_max_input_size: ${MAX_INPUT_SIZE} }
serving: { model_repository: ["${resolve(TRITON_MODEL_REPOSITORY)}"], model_control_mode: explicit, load_model: [simple] }
auth: { master_key_env: FUZZ_MASTER, db: "${join(dir, 'herd.db')}" }
billing: { ledger: "sqlite:${join(dir, 'ledger.db')}" }
providers:
  fake: { type: openai, base_url: "${upstream.url}/v1", api_key_env: FUZZ_UPSTREAM_KEY, exchange_rate: 1.0, timeout_ms: 2000, retry: { attempts: 1 } }
models:
  fuzz-model: { price: { input: 1, output: 2 }, deployments: [{ provider: fake }] }
`,
        resolve('herd.yaml'),
      );
      const server: HerdServer = await startHerd(config, { env: { FUZZ_MASTER: FUZZ_MASTER_KEY, FUZZ_UPSTREAM_KEY: 'sk-fuzz-upstream' }, log: (line) => log.push(line) });
      const port = Number(new URL(server.httpUrl).port);
      const health = Buffer.from('GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n');
      const check = async (input: unknown) => {
        const bytes = input as Buffer;
        upstream.requests.length = 0;
        log.length = 0;
        const answer = await exchange(port, bytes, 4000);
        if (answer === undefined) throw new Error('the server neither answered nor closed the connection');
        if (!answer.closedSilently) {
          const codes = statuses(answer.bytes);
          if (codes.length === 0) throw new Error(`not an HTTP answer: ${JSON.stringify(answer.bytes.subarray(0, 200).toString('latin1'))}`);
          if (codes.includes(500)) throw new Error(`answered 500: ${answer.bytes.toString('utf8').slice(0, 600)}`);
        }
        const internal = log.find((line) => line.includes('internal error'));
        if (internal !== undefined) throw new Error(`server logged: ${internal.slice(0, 600)}`);
        const alive = await exchange(port, health, 4000);
        if (alive === undefined || statuses(alive.bytes)[0] !== 200) throw new Error('the server is not healthy after this input');
      };
      return {
        arbitrary: httpInputs(),
        check,
        close: async () => {
          await server.close();
          await upstream.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

export const HTTP_TARGETS: (() => FuzzTarget)[] = [httpTarget];
