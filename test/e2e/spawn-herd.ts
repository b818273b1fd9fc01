// `herd serve` as a child process, for tests that kill it (SIGKILL) and start it again on the same files.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const CLI = resolve('src/cli/herd.ts');

export interface HerdProcess {
  url: string;
  child: ChildProcess;
  /** The signal it died of (null: it exited). */
  exited: Promise<NodeJS.Signals | null>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

/**
 * Resolves once it listens (its "Started HTTPService" line); rejects if it exits first. By default a SIGTERM
 * skips the drain grace (--drain-grace-secs 0), so stopping it does not wait; pass [] to keep herd.yaml's.
 */
export async function spawnHerd(config: string, env: NodeJS.ProcessEnv, extraArgs: readonly string[] = ['--drain-grace-secs', '0']): Promise<HerdProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve', '--config', config, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const exited = new Promise<NodeJS.Signals | null>((done) => child.once('exit', (_code, signal) => done(signal)));
  let out = '';
  const url = await new Promise<string>((ok, fail) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/.exec(out);
      if (m) ok(m[1] as string);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then(() => fail(new Error(`herd exited before starting: ${out}`)));
  });
  return { url, child, exited, output: () => out };
}

export async function stopHerd(herd: HerdProcess, signal: NodeJS.Signals): Promise<NodeJS.Signals | null> {
  if (herd.child.exitCode === null && herd.child.signalCode === null) herd.child.kill(signal);
  return herd.exited;
}

/** For t.after: a child still running when a test fails must not outlive it. */
export function killIfRunning(herd: HerdProcess | undefined): void {
  if (herd && herd.child.exitCode === null && herd.child.signalCode === null) herd.child.kill('SIGKILL');
}
