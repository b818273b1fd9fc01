// ModelInfer's route with a stand-in serving side: the InferCall it hands to `infer` carries the call's signal,
// which fires when the client cancels or the grpc-timeout passes, and stays quiet for a call answered in full.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, constants, createServer, type ClientHttp2Session, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { MethodDefinition, ServiceDefinition } from '@grpc/proto-loader';
import type { AbortLink } from '../../src/core/abort-link.ts';
import type { InferAnswer, InferCall } from '../../src/serving/infer-call.ts';
import { GrpcHttp2Call } from '../../src/grpc/grpc-http2-call.ts';
import type { GrpcServiceDeps } from '../../src/grpc/grpc-service-deps.ts';
import { loadGrpcProtos } from '../../src/grpc/load-grpc-protos.ts';
import { createInferRequestDecoder, createModelInferRoute } from '../../src/grpc/model-infer-route.ts';

const infer = (loadGrpcProtos()['inference.GRPCInferenceService'] as ServiceDefinition)['ModelInfer'] as MethodDefinition<object, object>;
const calls: InferCall[] = [];
/** How the stand-in answers: at once, or never (the test cancels). */
let answerAtOnce = true;

const deps = {
  inference: {
    resolve: (name: string) => ({ name, version: 1 }),
    infer: (call: InferCall): Promise<InferAnswer> => {
      calls.push(call);
      if (!answerAtOnce) return new Promise(() => {});
      return Promise.resolve({ modelName: call.modelName, modelVersion: 1, id: call.id, outputs: [{ name: 'OUT', datatype: 'INT32', shape: [1], data: Int32Array.of(3) }] });
    },
  },
  sharedMemory: {},
  traceSettings: { mode: 'triton', sample: () => undefined },
} as unknown as GrpcServiceDeps;

let server: Http2Server;
let client: ClientHttp2Session;

before(async () => {
  const route = createModelInferRoute(deps, createInferRequestDecoder(infer.requestDeserialize), 1 << 20);
  server = createServer();
  server.on('stream', (stream, headers) => route(new GrpcHttp2Call(stream, headers, 'ipv4:127.0.0.1:1'), 'identity'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
after(() => {
  client.close();
  server.close();
});

function send(headers: Record<string, string> = {}) {
  const body = infer.requestSerialize({ model_name: 'm', inputs: [{ name: 'IN', datatype: 'INT32', shape: [1] }], raw_input_contents: [Buffer.from(Int32Array.of(3).buffer)] });
  const req = client.request({ ':method': 'POST', ':path': infer.path, 'content-type': 'application/grpc', te: 'trailers', ...headers });
  req.end(Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), body]));
  req.resume();
  return req;
}

async function nextCall(count: number): Promise<InferCall> {
  while (calls.length < count) await new Promise((resolve) => setImmediate(resolve));
  return calls[count - 1] as InferCall;
}

test('an answered call: the InferCall has a signal that never fires', async () => {
  answerAtOnce = true;
  const req = send();
  const [trailers] = (await once(req, 'trailers')) as [Record<string, string>];
  assert.equal(trailers['grpc-status'], '0');
  const call = await nextCall(1);
  assert.ok(call.signal);
  assert.equal(call.signal.aborted, false);
});

test('a client that cancels fires the InferCall signal; so does a grpc-timeout that passes', async () => {
  answerAtOnce = false;
  const req = send();
  const call = await nextCall(2);
  const signal = call.signal as AbortLink;
  const fired = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  req.close(constants.NGHTTP2_CANCEL);
  await fired;
  assert.equal(signal.aborted, true);

  // Long enough for the request to reach infer first (the timer starts with the call).
  const timed = send({ 'grpc-timeout': '300m' });
  const [headers] = (await once(timed, 'response')) as [Record<string, string>];
  assert.equal(headers['grpc-status'], '4');
  assert.equal((await nextCall(3)).signal?.aborted, true);
});
