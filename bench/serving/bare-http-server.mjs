// The floor for any Node HTTP server on this machine: reads the whole request body and answers a
// body of a given size, nothing else. Benchmarks compare Herd's requests/s with this, in one run.
// Usage: node bench/serving/bare-http-server.mjs PORT RESPONSE_BYTES
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const responseBytes = Number(process.argv[3] ?? 2048);
const body = Buffer.alloc(responseBytes, 1);

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    Buffer.concat(chunks);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
