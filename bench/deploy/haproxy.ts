// HAProxy (Debian's haproxy) in front of the replicas: the config a user would copy (health checks on
// /v2/health/ready every 250 ms, redispatch, retries, keep-alive to the servers), run as a child process,
// steered and read through its admin socket (server states, maintenance for the 1/2/3-replica runs).
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';

export interface HaproxyServer {
  name: string;
  host: string;
  port: number;
}

export interface HaproxyOptions {
  port: number;
  servers: HaproxyServer[];
  /** HAProxy's `retry-on` list; undefined: HAProxy's default (conn-failure only). */
  retryOn?: string | undefined;
  retries: number;
  /**
   * Test plumbing, not part of the config to copy: TCP forwards from the bridge address into the host's
   * loopback (PostgreSQL, Redis, the fake upstream), so the replicas in their namespaces reach them
   * through a C proxy rather than through the harness's busy event loop.
   */
  forwards?: { name: string; bind: string; target: string }[];
}

/** The generated haproxy.cfg; `socket` is the admin socket's path. */
export function haproxyConfig(options: HaproxyOptions, socket: string): string {
  return `global
    maxconn 4096
    stats socket ${socket} mode 600 level admin
    log stdout format raw local0

defaults
    mode http
    log global
    option httplog
    # Only requests that failed, were retried or redispatched are logged (the run reads them).
    option dontlog-normal
    option http-keep-alive
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 10s
    # Without it a check's timeout is its interval (250 ms): on a busy machine slow checks mark every
    # replica DOWN at once (seen on 2 cores while one replica restarts; all servers down = 503 NOSRV).
    timeout check 2s
    retries ${options.retries}
    option redispatch 1
${options.retryOn ? `    retry-on ${options.retryOn}\n` : ''}
frontend herd_in
    bind 127.0.0.1:${options.port}
    default_backend herd

backend herd
    balance roundrobin
    http-reuse safe
    option httpchk GET /v2/health/ready
    http-check expect status 200
    default-server inter 250ms fastinter 250ms downinter 250ms rise 2 fall 2
    # Which replica answered (HAProxy's own errors included), for the run's per-failure report.
    http-after-response set-header x-rr-server %s
${options.servers.map((s) => `    server ${s.name} ${s.host}:${s.port} check`).join('\n')}
${(options.forwards ?? []).map((f) => `\n# test plumbing\nlisten ${f.name}\n    mode tcp\n    option tcplog\n    timeout client 1h\n    timeout server 1h\n    bind ${f.bind}\n    server ${f.name} ${f.target}\n`).join('')}`;
}

export interface Haproxy {
  url: string;
  pid: number | undefined;
  /** Log lines (failed, retried or redispatched requests; server state changes) with the ms they arrived. */
  log: { at: number; line: string }[];
  /** Server name → status column of `show stat` (UP, DOWN, MAINT, `UP 1/2`…). */
  states(): Promise<Map<string, string>>;
  waitFor(server: string, status: 'UP' | 'MAINT' | 'DOWN', timeoutMs: number): Promise<void>;
  setState(server: string, state: 'ready' | 'maint'): Promise<void>;
  stop(): Promise<void>;
}

export async function startHaproxy(dir: string, options: HaproxyOptions): Promise<Haproxy> {
  const socket = join(dir, 'haproxy.sock');
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, haproxyConfig(options, socket));
  const child: ChildProcess = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const log: { at: number; line: string }[] = [];
  let partial = '';
  const onData = (d: Buffer) => {
    const text = partial + d.toString();
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') log.push({ at: Date.now(), line });
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const command = (cmd: string) => adminCommand(socket, cmd);
  const states = async () => {
    const csv = await command('show stat');
    const rows = csv.split('\n').map((l) => l.split(','));
    const header = (rows[0] ?? []).map((h) => h.replace(/^# /, ''));
    const [px, sv, st] = ['pxname', 'svname', 'status'].map((h) => header.indexOf(h)) as [number, number, number];
    const out = new Map<string, string>();
    for (const r of rows.slice(1)) if (r[px] === 'herd' && r[sv] !== 'BACKEND' && r[sv] !== undefined) out.set(r[sv] as string, r[st] ?? '');
    return out;
  };
  // The admin socket appears once the config is parsed and the listeners bound.
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`haproxy exited ${child.exitCode}:\n${log.map((l) => l.line).join('\n')}`);
    try {
      await states();
      break;
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url: `http://127.0.0.1:${options.port}`,
    pid: child.pid,
    log,
    states,
    async waitFor(server, status, timeoutMs) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const now = (await states()).get(server) ?? '?';
        if (now === status) return;
        if (Date.now() > until) throw new Error(`haproxy: server ${server} is ${now}, not ${status}, after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async setState(server, state) {
      await command(`set server herd/${server} state ${state}`);
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

function adminCommand(socket: string, cmd: string): Promise<string> {
  return new Promise((ok, fail) => {
    const conn = createConnection(socket);
    let out = '';
    conn.on('data', (d: Buffer) => {
      out += d.toString();
    });
    conn.on('error', fail);
    conn.on('end', () => ok(out));
    conn.on('connect', () => conn.end(`${cmd}\n`));
  });
}
