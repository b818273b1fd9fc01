// The soak's real processes: Herd replicas (`herd serve`, killed and restarted at will), a redis-server of
// its own (restarted at will), the `herd keys` CLI, and each process's RSS and open descriptors from /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { resolve } from 'node:path';

const CLI = resolve('src/cli/herd.ts');

export interface Resources {
  rssMiB: number;
  fds: number;
}

/** RSS and open file descriptors of a live process (Linux /proc); undefined once it is gone. */
export function readResources(pid: number | undefined): Resources | undefined {
  if (pid === undefined) return undefined;
  try {
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
    return { rssMiB: Math.round(rss * 10) / 10, fds: readdirSync(`/proc/${pid}/fd`).length };
  } catch {
    return undefined;
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

/** One Herd replica; start() again after a kill (it gets a new port: port 0). */
export class HerdReplica {
  url = '';
  metricsUrl = '';
  child: ChildProcess | undefined;
  /** The output of every life, for the secret grep and for failures. */
  log = '';
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    private readonly config: string,
    private readonly env: NodeJS.ProcessEnv,
    /** A command the replica runs under, e.g. `ip netns exec NS` (it execs, so the pid is the replica's). */
    private readonly wrap: readonly string[] = [],
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  async start(): Promise<void> {
    this.url = '';
    const argv = [process.execPath, '--import', 'tsx', CLI, 'serve', '--config', this.config, '--grpc-port', '0'];
    const [command, ...args] = [...this.wrap, ...argv] as [string, ...string[]];
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...this.env },
    });
    this.child = child;
    this.exited = new Promise((done) => child.once('exit', () => done()));
    await new Promise<void>((ok, fail) => {
      let out = '';
      const onData = (d: Buffer) => {
        const text = d.toString();
        out += text;
        this.log += text;
        const http = /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/.exec(out);
        const metrics = /Started Metrics Service at \S+ \((http:\/\/[^)]+)\)/.exec(out);
        if (http && metrics) {
          this.url = http[1] as string;
          this.metricsUrl = (metrics[1] as string).replace(/\/metrics$/, '');
          ok();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      void this.exited.then(() => fail(new Error(`${this.name} exited before it started:\n${out}`)));
    });
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (!this.running) return;
    if (signal === 'SIGKILL') this.url = '';
    this.child?.kill(signal);
    await this.exited;
  }
}

/** A redis-server on a fixed port with no persistence: a restart forgets every count, as a real one without AOF would. */
export class RedisServer {
  child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(readonly port: number) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    this.child = child;
    this.exited = new Promise((done) => child.once('exit', () => done()));
    for (let i = 0; i < 200; i++) {
      if (await ping(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on ${this.port} did not start`);
  }

  async stop(): Promise<void> {
    this.child?.kill('SIGKILL');
    await this.exited;
  }
}

function ping(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (d) => {
      socket.destroy();
      done(d.toString().startsWith('+PONG'));
    });
  });
}

/** `herd keys create` (the CLI an operator uses): returns the key's id and its secret. */
export function createKey(db: string, name: string, flags: string[]): Promise<{ id: string; secret: string }> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'keys', 'create', '--db', db, '--name', name, ...flags], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('exit', (code) => {
      const id = /Created key (\S+)/.exec(err)?.[1];
      if (code !== 0 || id === undefined) fail(new Error(`herd keys create ${name} failed (${code}): ${err}`));
      else ok({ id, secret: out.trim() });
    });
  });
}
