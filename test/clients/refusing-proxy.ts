// An HTTP(S) proxy that refuses everything (403) and notes where each request wanted to go: the real CLIs get
// it as HTTPS_PROXY/HTTP_PROXY, so nothing but 127.0.0.1 (NO_PROXY) is reachable, and a test can see what they tried.
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RefusingProxy {
  url: string;
  /** `CONNECT host:port` targets and plain `METHOD url` requests, in order. */
  attempts: string[];
  close(): Promise<void>;
}

export async function startRefusingProxy(): Promise<RefusingProxy> {
  const attempts: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    attempts.push(`${req.method} ${req.url}`);
    res.writeHead(403, { 'content-type': 'text/plain' });
    res.end('the client suite runs offline\n');
  });
  server.on('connect', (req, socket: Socket) => {
    attempts.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
