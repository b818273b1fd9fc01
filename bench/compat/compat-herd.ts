// One `herd serve` from dist/ on the ports Triton's examples dial (8000 HTTP, 8001 gRPC, 8002 metrics),
// for the compatibility run: started, waited for, its models put back after an example unloads them, stopped.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import { resolve } from 'node:path';

const HTTP = 'http://127.0.0.1:8000';

export interface CompatHerd {
  logFile: string;
  /** Loads again every model that was READY at start and is not now. */
  restore(): Promise<void>;
  stop(): Promise<void>;
}

interface ModelState {
  name: string;
  state?: string;
}

async function modelStates(): Promise<ModelState[]> {
  return (await (await fetch(`${HTTP}/v2/repository/index`, { method: 'POST', body: '{}' })).json()) as ModelState[];
}

async function readyModels(): Promise<Set<string>> {
  return new Set((await modelStates()).filter((m) => m.state === 'READY').map((m) => m.name));
}

async function waitLoaded(child: ChildProcess, logFile: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`herd serve exited with ${child.exitCode}; see ${logFile}`);
    try {
      if ((await fetch(`${HTTP}/v2/health/live`)).ok && !(await modelStates()).some((m) => m.state === 'LOADING')) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`herd serve not up after 120 s; see ${logFile}`);
}

/**
 * Explicit model control, as Triton's QA runs the model-control examples; `loadAll` loads every model
 * at start. Readiness is not strict, so one model that fails to load fails its own examples and not
 * every is_server_ready() check.
 */
export async function startCompatHerd(repository: string, python: string, logFile: string, loadAll: boolean): Promise<CompatHerd> {
  const log = openSync(logFile, 'w');
  const args = [
    resolve('dist/cli/herd.js'),
    'serve',
    '--model-repository',
    repository,
    '--host',
    '127.0.0.1',
    '--http-port',
    '8000',
    '--grpc-port',
    '8001',
    '--metrics-port',
    '8002',
    '--model-control-mode',
    'explicit',
    ...(loadAll ? ['--load-model', '*'] : []),
    '--strict-readiness',
    'false',
    '--drain-grace-secs',
    '0',
    '--backend-config',
    `python,python-executable=${python}`,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', log, log], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' } });
  const stop = () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
  try {
    await waitLoaded(child, logFile);
  } catch (err) {
    await stop();
    throw err;
  }
  const expected = await readyModels();
  return {
    logFile,
    stop,
    async restore() {
      const now = await readyModels();
      for (const name of expected) if (!now.has(name)) await fetch(`${HTTP}/v2/repository/models/${name}/load`, { method: 'POST', body: '{}' });
    },
  };
}
