// A TCP proxy (port 0) in front of a real server (PostgreSQL, Redis) that a test or the soak can cut and
// restore: `refuse` resets every connection (a stopped server), `blackhole` holds them open and drops every
// byte (a network gone without a reset, the case only timeouts end).
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export type CutMode = 'refuse' | 'blackhole';

export interface TcpFaultProxy {
  host: string;
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** From now on, nothing passes; open connections are reset (`refuse`) or silenced (`blackhole`). */
  cut(mode: CutMode): void;
  restore(): void;
  readonly state: 'open' | CutMode;
  close(): Promise<void>;
}

export async function startTcpFaultProxy(target: { host: string; port: number }): Promise<TcpFaultProxy> {
  let state: 'open' | CutMode = 'open';
  let accepted = 0;
  const pairs = new Set<{ client: Socket; server: Socket }>();
  const held = new Set<Socket>();

  const server = createServer((client) => {
    accepted++;
    if (state === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    if (state === 'blackhole') {
      hold(client);
      return;
    }
    const upstream = createConnection(target);
    const pair = { client, server: upstream };
    pairs.add(pair);
    const drop = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });

  function hold(socket: Socket): void {
    held.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => socket.destroy());
    socket.on('close', () => held.delete(socket));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    connections: () => accepted,
    get state() {
      return state;
    },
    cut(mode) {
      state = mode;
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        if (mode === 'refuse') {
          pair.client.resetAndDestroy();
          pair.server.destroy();
        } else {
          // Bytes stop flowing both ways; the client's socket stays open with nobody answering.
          pair.client.unpipe(pair.server);
          pair.server.unpipe(pair.client);
          for (const socket of [pair.client, pair.server]) {
            socket.removeAllListeners('close');
            socket.removeAllListeners('error');
          }
          pair.server.on('error', () => undefined);
          pair.server.destroy();
          hold(pair.client);
        }
      }
    },
    restore() {
      state = 'open';
      // Connections silenced by a blackhole stay dead, as after a real outage: the client must notice and reconnect.
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server.destroy();
      }
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** host and port of a URL such as postgres://u@127.0.0.1:5432/db or redis://127.0.0.1:6379. */
export function targetOf(url: string, defaultPort: number): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname || '127.0.0.1', port: u.port === '' ? defaultPort : Number(u.port) };
}

/** The same URL with its host and port replaced by the proxy's. */
export function throughProxy(url: string, proxy: Pick<TcpFaultProxy, 'host' | 'port'>): string {
  const u = new URL(url);
  u.hostname = proxy.host;
  u.port = String(proxy.port);
  return u.toString();
}
