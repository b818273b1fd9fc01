// The framework-free infer path answers exactly as the Fastify route does: same bodies, statuses and
// headers for good and bad requests. Plain node:http requests take the fast path; requests that ask
// for compression (fetch always does) take Fastify's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { HerdServer } from '../../src/app.ts';
import { binaryBody, EXAMPLE_REPOSITORY, startTestServer } from './start-test-server.ts';

let server: HerdServer;
before(async () => {
  server = await startTestServer({ repositories: [EXAMPLE_REPOSITORY], controlMode: 'explicit', loadModel: ['add_sub'] });
});
after(() => server.close());

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A bare node:http POST: no Accept-Encoding, known length: the fast path's kind of request. */
function plainPost(path: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  const url = new URL(path, server.httpUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function framework(path: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(new URL(path, server.httpUrl), { method: 'POST', body, headers: { ...headers, 'accept-encoding': 'identity' } });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: Buffer.from(await res.arrayBuffer()) };
}

const ints = (f: (i: number) => number) => Int32Array.from({ length: 16 }, (_, i) => f(i));

test('binary and JSON requests: identical answers on both paths', async () => {
  const { body, headerLength } = binaryBody(
    {
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], parameters: { binary_data_size: 64 } },
      ],
      parameters: { binary_data_output: true },
    },
    ints((i) => i),
    ints(() => 2),
  );
  const headers = { 'inference-header-content-length': String(headerLength), 'content-type': 'application/octet-stream' };
  const fast = await plainPost('/v2/models/add_sub/infer', body, headers);
  const slow = await framework('/v2/models/add_sub/infer', body, headers);
  assert.equal(fast.status, 200);
  assert.deepEqual(fast.body, slow.body);
  assert.equal(fast.headers['inference-header-content-length'], slow.headers['inference-header-content-length']);

  const json = Buffer.from(
    JSON.stringify({
      inputs: [
        { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: [...ints((i) => i)] },
        { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: [...ints(() => 1)] },
      ],
    }),
  );
  const a = await plainPost('/v2/models/add_sub/versions/1/infer', json, { 'content-type': 'application/json' });
  const b = await framework('/v2/models/add_sub/versions/1/infer', json, { 'content-type': 'application/json' });
  assert.equal(a.status, 200);
  assert.deepEqual(JSON.parse(a.body.toString()), JSON.parse(b.body.toString()));
  assert.match(String(a.headers['content-type']), /application\/json/);
});

test('errors: same status and message on both paths, and the server keeps serving', async () => {
  const cases: [string, Buffer, Record<string, string>][] = [
    ['/v2/models/nope/infer', Buffer.from('{}'), {}],
    ['/v2/models/add_sub/versions/x/infer', Buffer.from('{}'), {}],
    ['/v2/models/add_sub/infer', Buffer.from('{"inputs": ['), {}],
    ['/v2/models/add_sub/infer', Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [1, 15], data: Array(15).fill(1) }] })), {}],
    ['/v2/models/add_sub/infer', Buffer.from('{"inputs": []}'), { 'inference-header-content-length': '999' }],
  ];
  for (const [path, body, headers] of cases) {
    const fast = await plainPost(path, body, headers);
    const slow = await framework(path, body, headers);
    assert.equal(fast.status, slow.status, `${path}: ${fast.body.toString()}`);
    assert.deepEqual(JSON.parse(fast.body.toString()), JSON.parse(slow.body.toString()), path);
    assert.ok(fast.status >= 400);
  }
  const ok = await plainPost(
    '/v2/models/add_sub/infer',
    Buffer.from(
      JSON.stringify({
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: Array(16).fill(1) },
        ],
      }),
    ),
    {},
  );
  assert.equal(ok.status, 200);
});
