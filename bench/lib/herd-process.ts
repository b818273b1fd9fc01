// Starts `herd serve` (or the bare server) as a child process for a benchmark and stops it again.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Herd runs as `npm start` runs it: the example models generated (mlp_2048 is not in git) and the
 * code compiled to dist/, once per benchmark process.
 */
let built = false;
export function ensureBuilt(): void {
  if (built) return;
  for (const script of ['models', 'build']) {
    const run = spawnSync('npm', ['run', '--silent', script], { stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`npm run ${script} failed`);
  }
  built = true;
}

export interface RunningProcess {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function waitForLine(child: ChildProcess, pattern: RegExp, what: string): Promise<RegExpMatchArray> {
  return new Promise((ok, fail) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = out.match(pattern);
      if (m) {
        child.stdout?.off('data', onData);
        ok(m);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.on('exit', (code) => fail(new Error(`${what} exited with ${code}:\n${out}`)));
  });
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise((done) => {
      if (child.exitCode !== null) return done();
      child.once('exit', () => done());
      child.kill('SIGTERM');
    });
}

export async function startHerd(repository: string, extraArgs: string[] = []): Promise<RunningProcess> {
  ensureBuilt();
  const child = spawn(
    process.execPath,
    [resolve('dist/cli/herd.js'), 'serve', '--model-repository', repository, '--host', '127.0.0.1', '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0', ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const m = await waitForLine(child, /Started HTTPService at \S+ \((http:\/\/[^)]+)\)/, 'herd serve');
  return { url: m[1] as string, child, stop: stopper(child) };
}

export async function startBareServer(responseBytes: number): Promise<RunningProcess> {
  const child = spawn(process.execPath, [resolve('bench/serving/bare-http-server.mjs'), '0', String(responseBytes)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const m = await waitForLine(child, /listening (\d+)/, 'bare server');
  return { url: `http://127.0.0.1:${m[1]}`, child, stop: stopper(child) };
}

/**
 * A one-model repository for a benchmark variant: the example model's config rewritten by `edit`,
 * its model file linked (not copied: mlp_2048 is 27 MB).
 */
export function createVariantRepository(model: string, edit: (config: string) => string): string {
  const source = resolve('examples/model_repository', model);
  const repo = mkdtempSync(join(tmpdir(), `herd-bench-${model}-`));
  mkdirSync(join(repo, model, '1'), { recursive: true });
  symlinkSync(join(source, '1', 'model.onnx'), join(repo, model, '1', 'model.onnx'));
  writeFileSync(join(repo, model, 'config.pbtxt'), edit(readFileSync(join(source, 'config.pbtxt'), 'utf8')));
  return repo;
}

export function copyRepository(models: string[]): string {
  const repo = mkdtempSync(join(tmpdir(), 'herd-bench-'));
  for (const m of models) cpSync(resolve('examples/model_repository', m), join(repo, m), { recursive: true });
  return repo;
}
