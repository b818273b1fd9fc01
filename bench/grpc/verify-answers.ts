// One request per protocol before any load, read in full: a gRPC answer must carry grpc-status 0 in its
// trailers and the right tensors, an HTTP answer status 200 and the right binary outputs. The load tools
// count only HTTP statuses, so this is where a wrong answer (or a gRPC error inside a 200) is caught.
import { request as httpRequest } from 'node:http';
import { connect } from 'node:http2';
import type { BenchModel } from './bench-models.ts';
import { decodeModelInferFrame, MODEL_INFER_PATH } from './grpc-frame.ts';

export const GRPC_HEADERS = { 'content-type': 'application/grpc', te: 'trailers' };

function checkOutputs(model: BenchModel, outputs: { name: string; bytes: Buffer }[], what: string): void {
  for (const [name, expected] of Object.entries(model.expected)) {
    const got = outputs.find((o) => o.name === name);
    if (!got) throw new Error(`${what}: no output ${name}`);
    if (!got.bytes.equals(expected)) throw new Error(`${what}: output ${name} holds other bytes than expected`);
  }
}

/** Sends the framed request once over h2c and returns the answer's body (one framed response) if it is right. */
export function verifyGrpcAnswer(origin: string, frame: Buffer, model: BenchModel): Promise<Buffer> {
  const what = `gRPC ${model.name} at ${origin}`;
  return new Promise((ok, fail) => {
    const session = connect(origin);
    session.on('error', fail);
    const stream = session.request({ ':method': 'POST', ':path': MODEL_INFER_PATH, ...GRPC_HEADERS });
    const chunks: Buffer[] = [];
    let headers: Record<string, unknown> = {};
    let trailers: Record<string, unknown> = {};
    stream.on('response', (h) => {
      headers = h;
    });
    stream.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('error', fail);
    stream.on('end', () => {
      session.close();
      try {
        // A trailers-only answer (every gRPC error Herd sends) carries grpc-status in the headers.
        const status = trailers['grpc-status'] ?? headers['grpc-status'];
        const message = trailers['grpc-message'] ?? headers['grpc-message'];
        if (headers[':status'] !== 200 || status !== '0') throw new Error(`${what}: HTTP ${headers[':status']}, grpc-status ${status} ${message ?? ''}`);
        const body = Buffer.concat(chunks);
        const answer = decodeModelInferFrame(body);
        checkOutputs(
          model,
          answer.outputs.map((o, i) => ({ name: o.name, bytes: answer.raw_output_contents[i] ?? Buffer.alloc(0) })),
          what,
        );
        ok(body);
      } catch (err) {
        fail(err);
      }
    });
    stream.end(frame);
  });
}

export interface HttpAnswer {
  body: Buffer;
  headerLength: number;
}

/** Sends the binary infer body once with only the headers wrk sends and returns the answer if it is right. */
export function verifyHttpAnswer(origin: string, body: Buffer, headers: Record<string, string>, model: BenchModel): Promise<HttpAnswer> {
  const what = `HTTP ${model.name} at ${origin}`;
  return new Promise((ok, fail) => {
    const req = httpRequest(`${origin}/v2/models/${model.name}/infer`, { method: 'POST', headers: { ...headers, 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        try {
          const answer = Buffer.concat(chunks);
          const headerLength = Number(res.headers['inference-header-content-length']);
          if (res.statusCode !== 200 || !(headerLength > 0)) throw new Error(`${what}: ${res.statusCode} ${answer.subarray(0, 300).toString()}`);
          const json = JSON.parse(answer.subarray(0, headerLength).toString()) as { outputs: { name: string; parameters?: { binary_data_size?: number } }[] };
          let offset = headerLength;
          const outputs = json.outputs.map((o) => {
            const size = o.parameters?.binary_data_size ?? 0;
            offset += size;
            return { name: o.name, bytes: answer.subarray(offset - size, offset) };
          });
          checkOutputs(model, outputs, what);
          ok({ body: answer, headerLength });
        } catch (err) {
          fail(err);
        }
      });
    });
    req.on('error', fail);
    req.end(body);
  });
}
