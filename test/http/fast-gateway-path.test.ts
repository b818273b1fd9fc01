// Which requests the gateway's framework-free path takes: a POST to a path in the exchanges' table with a
// plain body goes to that path's exchange; anything else (other paths or methods, a query string, chunked
// or compressed bodies, oversized ones, shutdown) is left to the framework, here a stand-in that answers 299.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createFastGatewayHandler } from '../../src/http/fast-gateway-path.ts';
import type { GatewayRoute } from '../../src/http/gateway-exchanges.ts';

const LIMIT = 64;
let closing = false;
let server: Server;
let port = 0;

/** Each exchange answers 200 with its name and the body it was given. */
const exchange = (name: string): GatewayRoute => ({
  exchange: async (_req, res, body) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`${name}:${body?.toString('utf8') ?? ''}`);
  },
  refuse: () => ({ status: 500, headers: {}, text: 'not used' }),
});

before(async () => {
  const exchanges = new Map([
    ['/v1/messages', exchange('messages')],
    ['/v1/embeddings', exchange('embeddings')],
  ]);
  const fast = createFastGatewayHandler(exchanges, { maxInputSize: LIMIT, isClosing: () => closing });
  server = createServer((req, res) => {
    if (fast(req, res)) return;
    req.resume();
    req.on('end', () => {
      res.writeHead(299);
      res.end('framework');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

function send(method: string, path: string, body: string | undefined, headers: Record<string, string> = {}, chunked = false): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const out = { ...headers, ...(body !== undefined && !chunked ? { 'content-length': String(Buffer.byteLength(body)) } : {}) };
    const req = request({ host: '127.0.0.1', port, method, path, headers: out, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    if (body !== undefined && chunked) {
      req.write(body.slice(0, 3));
      req.end(body.slice(3));
    } else req.end(body);
  });
}

test('a plain POST to a path in the table goes to its exchange, with the whole body', async () => {
  assert.deepEqual(await send('POST', '/v1/messages', '{"a":1}'), { status: 200, text: 'messages:{"a":1}' });
  assert.deepEqual(await send('POST', '/v1/embeddings', '{"b":2}'), { status: 200, text: 'embeddings:{"b":2}' });
  assert.deepEqual(await send('POST', '/v1/messages', ''), { status: 200, text: 'messages:' });
});

test('everything else is left to the framework', async () => {
  const framework = { status: 299, text: 'framework' };
  assert.deepEqual(await send('POST', '/v1/chat/completions', '{}'), framework, 'not in the table');
  assert.deepEqual(await send('POST', '/v1/messages?beta=true', '{}'), framework, 'a query string');
  assert.deepEqual(await send('POST', '/v1/messages/', '{}'), framework, 'a trailing slash');
  assert.deepEqual(await send('GET', '/v1/messages', undefined), framework, 'another method');
  assert.deepEqual(await send('PUT', '/v1/messages', '{}'), framework, 'another method with a body');
  assert.deepEqual(await send('POST', '/v1/messages', '{"a":1}', {}, true), framework, 'chunked');
  assert.deepEqual(await send('POST', '/v1/messages', '{"a":1}', { 'content-encoding': 'gzip' }), framework, 'a content coding');
  assert.deepEqual(await send('POST', '/v1/messages', 'x'.repeat(LIMIT + 1)), framework, 'over the size limit');
  assert.deepEqual(await send('POST', '/v1/messages', 'x'.repeat(LIMIT)), { status: 200, text: `messages:${'x'.repeat(LIMIT)}` }, 'at the limit');
  closing = true;
  try {
    assert.deepEqual(await send('POST', '/v1/messages', '{}'), framework, 'during shutdown');
  } finally {
    closing = false;
  }
});
