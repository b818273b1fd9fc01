// A real HAProxy (Debian's) mounting a Herd under a two-segment path prefix, as a user's reverse proxy
// would: strips the prefix, sets X-Forwarded-Prefix/-For/-Proto, and logs every request it saw.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const HAPROXY = 'haproxy';

/** Why the proxy suites cannot run here (they skip with it), or undefined when they can. */
export function haproxyMissing(): string | undefined {
  const probe = spawnSync(HAPROXY, ['-v'], { encoding: 'utf8' });
  return probe.error ? 'haproxy is not installed (Debian: apt-get install -y haproxy; .ci/run installs it)' : undefined;
}

export interface ProxiedRequest {
  method: string;
  /** The path and query the browser asked the proxy for (before the prefix is stripped). */
  uri: string;
  status: number;
}

export interface PrefixProxy {
  /** `http://127.0.0.1:<port><prefix>`, no trailing slash. */
  url: string;
  origin: string;
  prefix: string;
  /** Every request the proxy answered so far, in order (from its log). */
  requests(): ProxiedRequest[];
  close(): Promise<void>;
}

export interface PrefixProxyOptions {
  /** Where Herd's HTTP port listens (`http://127.0.0.1:<port>`). */
  target: string;
  /** Default `/tools/herd`: two segments, the case single-segment handling gets wrong. */
  prefix?: string;
}

/** The generated config: one frontend, the prefix to Herd, everything else 404 at the proxy. */
export function prefixProxyConfig(port: number, targetHostPort: string, prefix: string): string {
  const escaped = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `global
  log stdout format raw local0
  maxconn 256

defaults
  mode http
  log global
  # method, URI as the client sent it, status: the test reads these lines
  log-format "%HM %HU %ST"
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout tunnel 60s

frontend console
  bind 127.0.0.1:${port}
  # a client's own forwarding headers never pass: the proxy states them
  http-request del-header X-Forwarded-Prefix
  http-request del-header X-Forwarded-For
  http-request del-header X-Forwarded-Proto
  option forwardfor
  http-request set-header X-Forwarded-Proto http
  # two lines of one name: either matches
  acl under_prefix path ${prefix}
  acl under_prefix path_beg ${prefix}/
  http-request deny deny_status 404 unless under_prefix
  default_backend herd

backend herd
  http-request set-header X-Forwarded-Prefix ${prefix}
  http-request replace-path ^${escaped}/?(.*)$ /\\1
  server herd ${targetHostPort}
`;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

const LOG_LINE = /^(\S+) (\S+) (\d+)$/;

/** Starts HAProxy on a free port with its config in a temp folder; close() stops it and removes the folder. */
export async function startPrefixProxy(options: PrefixProxyOptions): Promise<PrefixProxy> {
  const prefix = options.prefix ?? '/tools/herd';
  const target = new URL(options.target);
  const dir = mkdtempSync(join(tmpdir(), 'herd-prefix-proxy-'));
  // The free port is found by binding and releasing it: another process may take it first, so try a few.
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const file = join(dir, 'haproxy.cfg');
    writeFileSync(file, prefixProxyConfig(port, target.host, prefix));
    const started = await runHaproxy(file, port);
    if ('child' in started) {
      return {
        url: `http://127.0.0.1:${port}${prefix}`,
        origin: `http://127.0.0.1:${port}`,
        prefix,
        requests: () => [...started.requests],
        close: async () => {
          await stop(started.child);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    if (attempt === 4) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`haproxy did not start: ${started.error}`);
    }
  }
}

async function runHaproxy(file: string, port: number): Promise<{ child: ChildProcess; requests: ProxiedRequest[] } | { error: string }> {
  const requests: ProxiedRequest[] = [];
  let output = '';
  // -db: stay in the foreground (the test owns the process), logs to stdout.
  const child = spawn(HAPROXY, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  let pending = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const match = LOG_LINE.exec(line.trim());
      // <BADREQ>: the readiness probe below, a connection closed without a request
      if (match && match[1] !== '<BADREQ>') requests.push({ method: match[1] ?? '', uri: match[2] ?? '', status: Number(match[3]) });
      else if (!match) output += `${line}\n`;
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  for (let i = 0; i < 200; i++) {
    if (exited) return { error: output.trim() };
    if (await canConnect(port)) return { child, requests };
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  await stop(child);
  return { error: `not listening on ${port} after 5 s: ${output.trim()}` };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
