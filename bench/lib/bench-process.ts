// Child processes for the gateway-side benches (mock upstream, bare relay, Herd): start one and wait for
// the line that says where it listens, read its CPU time and RSS from /proc, stop it with SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface BenchProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Runs `node <cmd…>`; resolves once its output matches `pattern`, rejects if it exits first. */
export function startBenchProcess(cmd: string[], pattern: RegExp, toUrl: (m: RegExpMatchArray) => string, env: NodeJS.ProcessEnv = process.env): Promise<BenchProcess> {
  const child = spawn(process.execPath, cmd, { stdio: ['ignore', 'pipe', 'pipe'], env });
  return new Promise((ok, fail) => {
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = out.match(pattern);
      if (m)
        ok({
          url: toUrl(m),
          child,
          stop: () =>
            new Promise((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
    });
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) => fail(new Error(`${cmd.join(' ')} exited ${code}: ${out}`)));
  });
}

/** User + system CPU seconds of a process so far (Linux /proc). */
export const cpuSeconds = (pid: number): number => {
  const f = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

/** Resident set size of a process in MiB (Linux /proc). */
export const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
