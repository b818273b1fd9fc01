// A node:http server with Herd's deliberate limits (server.limits): header and request deadlines, the
// keep-alive timeout, and connection caps in all and per peer address, so slow or greedy clients cannot
// hold sockets for as long as Node's defaults allow (measured in docs/security.md, "Server limits").
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ServerLimits } from '../config/server-limits-config-schema.ts';

/** How often Node checks the header and request deadlines (its default, 30 s, lets a deadline slip by that much). */
const DEADLINE_CHECK_MS = 1_000;

export function createLimitedServer(limits: ServerLimits, handler: (req: IncomingMessage, res: ServerResponse) => void, onConnection?: (socket: Socket) => void): Server {
  const server = createServer(
    {
      headersTimeout: limits.headers_timeout_ms,
      requestTimeout: limits.request_timeout_ms,
      connectionsCheckingInterval: Math.max(1, Math.min(DEADLINE_CHECK_MS, limits.headers_timeout_ms || DEADLINE_CHECK_MS)),
    },
    handler,
  );
  server.keepAliveTimeout = limits.keep_alive_timeout_ms;
  if (limits.max_connections > 0) server.maxConnections = limits.max_connections;
  const perAddress = limits.max_connections_per_address;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    if (perAddress > 0) {
      const address = socket.remoteAddress ?? '';
      const count = (open.get(address) ?? 0) + 1;
      if (count > perAddress) {
        socket.destroy();
        return;
      }
      open.set(address, count);
      socket.once('close', () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left <= 0) open.delete(address);
        else open.set(address, left);
      });
    }
    onConnection?.(socket);
  });
  return server;
}
