// Runs one Triton example program against the Herd the compatibility run started: its own Python
// process, a time limit, and the verdict with the first line that says what went wrong.
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { CompatExample } from './compat-examples.ts';

export type Verdict = 'pass' | 'fail' | 'timeout' | 'not run';

export interface ExampleResult {
  example: CompatExample;
  verdict: Verdict;
  /** The failure's first telling line (or the skip reason). */
  detail: string;
  seconds: number;
}

export interface RunContext {
  python: string;
  /** PYTHONPATH holding the assembled tritonclient. */
  pythonPath: string;
  checkouts: Record<CompatExample['checkout'], string>;
  scratch: string;
  /** Triton's .proto files (grpc_service.proto, model_config.proto). */
  protos: string;
  timeoutMs: number;
}

/** A python_backend HTTP client copied to speak gRPC: same API, tritonclient.grpc, port 8001. */
function grpcCopy(source: string, scratch: string, index: number): string {
  const text = readFileSync(source, 'utf8')
    .replace(/import tritonclient\.http as (\w+)/g, 'import tritonclient.grpc as $1')
    .replace(/"localhost:8000"/g, '"localhost:8001"');
  const dir = join(scratch, `grpc-rewrite-${index}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, basename(source));
  writeFileSync(file, text);
  return file;
}

const TRACEBACK_TAIL = /^[\w.]*(Error|Exception|Exit)\b.*$/;
const TELLING = /error|exception|fail|incorrect|unexpected|expect|mismatch|missing/i;

/**
 * The line to show for a failure: a traceback's final exception line when the program died of one,
 * else the first line that reads like an error, else the last line printed.
 */
export function firstErrorLine(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  const tracebackAt = lines.findIndex((l) => l.startsWith('Traceback (most recent call last)'));
  if (tracebackAt >= 0) {
    const tail = lines.slice(tracebackAt + 1).find((l) => TRACEBACK_TAIL.test(l));
    if (tail) return tail;
  }
  return lines.find((l) => TELLING.test(l) && !l.startsWith('Traceback')) ?? lines.at(-1) ?? '(no output)';
}

/** Most examples print PASS when every check held; some paths exit 0 without it (a check that was skipped). */
function expectsPass(source: string): boolean {
  return readFileSync(source, 'utf8').includes('PASS');
}

/**
 * The JavaScript client as its README sets it up: a folder with client.js, Triton's protos in ./proto and
 * node_modules (here Herd's own, which hold @grpc/grpc-js and @grpc/proto-loader).
 */
function nodeCopy(source: string, ctx: RunContext, index: number): string {
  const dir = join(ctx.scratch, `node-client-${index}`);
  mkdirSync(join(dir, 'proto'), { recursive: true });
  cpSync(ctx.protos, join(dir, 'proto'), { recursive: true });
  symlinkSync(resolve('node_modules'), join(dir, 'node_modules'));
  const file = join(dir, basename(source));
  cpSync(source, file);
  return file;
}

export function runExample(example: CompatExample, index: number, ctx: RunContext): Promise<ExampleResult> {
  if (example.skip) return Promise.resolve({ example, verdict: 'not run', detail: example.skip, seconds: 0 });
  const source = join(ctx.checkouts[example.checkout], example.path);
  const file = example.runner === 'node' ? nodeCopy(source, ctx, index) : example.grpcRewrite ? grpcCopy(source, ctx.scratch, index) : source;
  const started = process.hrtime.bigint();
  return new Promise((done) => {
    const child = spawn(example.runner === 'node' ? process.execPath : ctx.python, [file, ...(example.args ?? [])], {
      cwd: dirname(source),
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: process.env.HOME ?? '/tmp',
        LANG: 'C.UTF-8',
        PYTHONPATH: ctx.pythonPath,
        PYTHONUNBUFFERED: '1',
        PYTHONDONTWRITEBYTECODE: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (d: Buffer) => {
      if (output.length < 1_000_000) output += d.toString();
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, ctx.timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (timedOut) done({ example, verdict: 'timeout', detail: `no exit within ${ctx.timeoutMs / 1000} s; last line: ${firstErrorLine(output)}`, seconds });
      else if (code === 0 && expectsPass(source) && !output.includes('PASS'))
        done({ example, verdict: 'fail', detail: `exited 0 without printing PASS; last line: ${firstErrorLine(output)}`, seconds });
      else if (code === 0) done({ example, verdict: 'pass', detail: '', seconds });
      else done({ example, verdict: 'fail', detail: firstErrorLine(output), seconds });
    });
  });
}
