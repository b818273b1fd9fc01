// The floor for both protocols in one process: a bare node:http server answering a fixed KServe binary
// answer and a bare node:http2 server answering a fixed gRPC ModelInfer answer (headers, one message,
// grpc-status trailers). Each reads the whole request first; nothing is decoded. The answers are the
// bytes Herd gave for the same request, so both floors move the same bytes as the server they bound.
// Usage: node bench/grpc/bare-floor-servers.mjs HTTP_BODY_FILE INFERENCE_HEADER_LENGTH GRPC_FRAME_FILE
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createH2Server } from 'node:http2';

const httpBody = readFileSync(process.argv[2]);
const headerLength = String(process.argv[3]);
const grpcFrame = readFileSync(process.argv[4]);

const http = createServer((req, res) => {
  // A load tool stopping at the end of its window resets what it had in flight; that is not a failure here.
  req.on('error', () => {});
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'inference-header-content-length': headerLength, 'content-length': httpBody.length });
    res.end(httpBody);
  });
});
http.keepAliveTimeout = 60_000;

const h2 = createH2Server();
h2.on('stream', (stream) => {
  stream.on('error', () => {});
  stream.on('data', () => {});
  stream.on('end', () => {
    if (stream.destroyed) return;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'grpc-message': 'OK' }));
    stream.end(grpcFrame);
  });
});

await Promise.all([new Promise((ok) => http.listen(0, '127.0.0.1', ok)), new Promise((ok) => h2.listen(0, '127.0.0.1', ok))]);
process.stdout.write(`listening http ${http.address().port} grpc ${h2.address().port}\n`);
process.on('SIGTERM', () => {
  http.close();
  h2.close();
  process.exit(0);
});
