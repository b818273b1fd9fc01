// One gRPC call on a bare node:http2 stream: the signal fires when the client cancels (RST_STREAM) or the
// grpc-timeout passes (then DEADLINE_EXCEEDED in the trailers), never after a normal end; errors before a message
// go out trailers-only with a percent-encoded grpc-message; metadata reads -bin values; frames split and join.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, constants, createServer, type ClientHttp2Session, type Http2Server, type IncomingHttpHeaders } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { HeaderMetadata } from '../../src/grpc/grpc-call-metadata.ts';
import { encodeGrpcMessage, GrpcMessageReader, parseGrpcTimeout } from '../../src/grpc/grpc-frames.ts';
import { GrpcHttp2Call } from '../../src/grpc/grpc-http2-call.ts';

let server: Http2Server;
let client: ClientHttp2Session;
const calls: GrpcHttp2Call[] = [];
/** What the next call does once it has its message (default: answers it back). */
let behave: (call: GrpcHttp2Call, message: Buffer) => void = () => {};

before(async () => {
  server = createServer();
  server.on('stream', (stream, headers) => {
    const call = new GrpcHttp2Call(stream, headers, 'ipv4:127.0.0.1:1');
    calls.push(call);
    call.readUnary('/t.T/M', 'identity', 1 << 20, (message) => behave(call, message));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
after(() => {
  client.close();
  server.close();
});

const frame = (body: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), body]);

/** Sends one request; resolves with the response headers, trailers (when any) and body. */
function send(headers: Record<string, string> = {}, body = frame(Buffer.from('hi'))) {
  const req = client.request({ ':method': 'POST', ':path': '/t.T/M', 'content-type': 'application/grpc', te: 'trailers', ...headers });
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  const result = new Promise<{ headers: IncomingHttpHeaders; trailers: IncomingHttpHeaders | undefined; body: Buffer }>((resolve) => {
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    req.on('response', (h) => {
      responseHeaders = h;
    });
    req.on('trailers', (t) => {
      trailers = t;
    });
    req.on('close', () => resolve({ headers: responseHeaders, trailers, body: Buffer.concat(chunks) }));
  });
  req.end(body);
  return { req, result };
}

test('a unary answer: headers, the message, then grpc-status 0 in trailers; the signal stays quiet', async () => {
  behave = (call, message) => call.sendUnary(frame(message));
  const { result } = send();
  const answer = await result;
  assert.equal(answer.headers['content-type'], 'application/grpc+proto');
  assert.equal(answer.trailers?.['grpc-status'], '0');
  assert.deepEqual(answer.body, frame(Buffer.from('hi')));
  assert.equal(calls.at(-1)?.signal.aborted, false);
});

test('a client that cancels (RST_STREAM CANCEL) fires the call signal', async () => {
  let received!: () => void;
  const got = new Promise<void>((resolve) => {
    received = resolve;
  });
  behave = () => received();
  const { req } = send();
  await got;
  const call = calls.at(-1) as GrpcHttp2Call;
  const aborted = once(call.signal, 'abort');
  req.close(constants.NGHTTP2_CANCEL);
  await aborted;
  assert.equal(call.signal.aborted, true);
});

test('grpc-timeout: DEADLINE_EXCEEDED from the server in trailers-only, and the signal fires', async () => {
  behave = () => {};
  const { result } = send({ 'grpc-timeout': '20m' });
  const answer = await result;
  assert.equal(answer.headers['grpc-status'], '4');
  assert.equal(answer.headers['grpc-message'], 'Deadline exceeded');
  assert.equal(calls.at(-1)?.signal.aborted, true);
});

test('errors: percent-encoded grpc-message; a malformed grpc-timeout and a missing message as grpc-js answers them', async () => {
  behave = (call) => call.fail(new Error('model ‘x’ 100% gone'));
  const failed = await send().result;
  assert.equal(failed.headers['grpc-status'], '13');
  assert.equal(decodeURIComponent(failed.headers['grpc-message'] as string), 'model ‘x’ 100% gone');
  const badTimeout = await send({ 'grpc-timeout': 'soon' }).result;
  assert.deepEqual([badTimeout.headers['grpc-status'], badTimeout.headers['grpc-message']], ['13', 'Invalid grpc-timeout value "soon"']);
  const empty = await send({}, Buffer.alloc(0)).result;
  assert.equal(empty.headers['grpc-status'], '12');
});

test('frames: split across chunks, several in one chunk, compressed, too large', () => {
  const got: string[] = [];
  const reader = new GrpcMessageReader('gzip', 64, (m) => got.push(m.toString()));
  const two = Buffer.concat([frame(Buffer.from('ab')), frame(Buffer.from('cde'))]);
  for (const byte of two) reader.push(Buffer.from([byte]));
  const zipped = gzipSync('zip');
  reader.push(Buffer.concat([Buffer.from([1, 0, 0, 0, zipped.length]), zipped, frame(Buffer.from('f'))]));
  assert.deepEqual(got, ['ab', 'cde', 'zip', 'f']);
  assert.equal(reader.partial, false);
  assert.throws(() => reader.push(Buffer.from([0, 0, 0, 1, 0])), /larger than max \(256 vs\. 64\)/);
  assert.throws(() => new GrpcMessageReader('identity', 64, () => {}).push(Buffer.concat([Buffer.from([1, 0, 0, 0, zipped.length]), zipped])), /identity/);
});

test('grpc-timeout units, grpc-message encoding, -bin metadata', () => {
  assert.deepEqual(['1H', '2M', '3S', '4m', '5000u', '6000000n'].map(parseGrpcTimeout), [3_600_000, 120_000, 3000, 4, 5, 6]);
  assert.equal(parseGrpcTimeout(undefined), undefined);
  assert.ok(Number.isNaN(parseGrpcTimeout('123456789S')));
  assert.equal(encodeGrpcMessage('plain text: ok'), 'plain text: ok');
  assert.equal(encodeGrpcMessage('50% é\n'), '50%25 %C3%A9%0A');
  const metadata = new HeaderMetadata({ 'x-api-key': 'k', 'trace-bin': `${Buffer.from('a').toString('base64')}, ${Buffer.from('b').toString('base64')}` });
  assert.deepEqual(metadata.get('x-api-key'), ['k']);
  assert.deepEqual(metadata.get('trace-bin').map(String), ['a', 'b']);
  assert.deepEqual(metadata.get('absent'), []);
});
