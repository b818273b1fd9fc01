// The floor for any Node gateway on this machine: node:http in, one undici Pool out, JSON parsed and
// re-serialised, SSE piped through — no auth, routing, validation or accounting.
// Usage: node bare-relay.mjs PORT UPSTREAM_ORIGIN
import { createServer } from 'node:http';
import { Pool } from 'undici';

const upstream = new Pool(process.argv[3], { connections: 128, keepAliveTimeout: 60_000 });

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    try {
      const request = JSON.parse(Buffer.concat(chunks).toString());
      const answer = await upstream.request({
        method: 'POST',
        path: '/v1/chat/completions',
        body: JSON.stringify(request),
        headers: { 'content-type': 'application/json', authorization: 'Bearer relay' },
      });
      if (request.stream) {
        res.writeHead(answer.statusCode, { 'content-type': 'text/event-stream' });
        for await (const part of answer.body) res.write(part);
        res.end();
        return;
      }
      const response = JSON.parse(await answer.body.text());
      const out = JSON.stringify(response);
      res.writeHead(answer.statusCode, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    } catch (err) {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(err) } }));
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => process.stdout.write(`listening ${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
