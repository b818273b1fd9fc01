// The Herd under test: any checkout (this one by default, or e.g. a worktree with another gRPC path), its
// dist/ built when missing or older than its src/, started as `herd serve` on free ports of 127.0.0.1.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds the checkout's dist/ with its own `npm run build` unless dist is there and newer than src/. */
export function ensureCheckoutBuilt(checkout: string): void {
  const entry = join(checkout, 'dist/cli/herd.js');
  if (existsSync(entry) && statSync(entry).mtimeMs >= newestMtime(join(checkout, 'src'))) return;
  process.stderr.write(`building ${checkout} (npm run build)\n`);
  const run = spawnSync('npm', ['run', '--silent', 'build'], { cwd: checkout, stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) throw new Error(`npm run build failed in ${checkout}`);
}

/** Commit and branch of the checkout, with "+ uncommitted changes" when its tree is dirty. */
export function describeCheckout(checkout: string): string {
  const git = (...args: string[]) => execFileSync('git', ['-C', checkout, ...args], { encoding: 'utf8' }).trim();
  try {
    const dirty = git('status', '--porcelain', '--untracked-files=no') === '' ? '' : ' + uncommitted changes';
    return `${git('rev-parse', '--short', 'HEAD')} (${git('rev-parse', '--abbrev-ref', 'HEAD')})${dirty}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

export interface HerdUnderTest {
  pid: number;
  httpOrigin: string;
  grpcOrigin: string;
  metricsUrl: string;
  stop(): Promise<void>;
}

export function startHerdServe(checkout: string, repository: string): Promise<HerdUnderTest> {
  const root = resolve(checkout);
  const child = spawn(
    process.execPath,
    [join(root, 'dist/cli/herd.js'), 'serve', '--model-repository', repository, '--host', '127.0.0.1', '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((ok, fail) => {
    let out = '';
    const onOutput = (d: Buffer) => {
      out += d.toString();
      const http = /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/.exec(out);
      const grpc = /Started GRPCInferenceService at \S+ \(([^)]+)\)/.exec(out);
      const metrics = /Started Metrics Service at \S+ \((http:\/\/[^)]+)\)/.exec(out);
      if (!http || !grpc || !metrics) return;
      child.stdout.off('data', onOutput);
      child.stdout.resume();
      ok({
        pid: child.pid as number,
        httpOrigin: http[1] as string,
        grpcOrigin: `http://${grpc[1]}`,
        metricsUrl: metrics[1] as string,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            stopping = true;
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', (d: Buffer) => {
      if (out.length < 100_000) out += d.toString();
    });
    let stopping = false;
    child.on('exit', (code, signal) => {
      const error = new Error(`herd serve (${checkout}) exited with ${code ?? signal}:\n${out.slice(-5000)}`);
      // Before it started: the start fails. After: a crash under load must not pass unnoticed.
      if (!stopping) process.stderr.write(`${error.message}\n`);
      fail(error);
    });
  });
}
