// One running Python stub: spawns the interpreter on herd_python_stub.py with the wire on fds 3 (to the
// stub) and 4 (from it), forwards the model's stdout/stderr lines to Herd's log, matches replies to
// commands by `seq`, and hands every other frame (logs, BLS calls, decoupled responses) to its owner.
// A shared-memory segment, when given, is inherited as fd 5 and closed when the process is gone.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { HerdError } from '../../../core/errors.ts';
import type { StubSharedMemory } from './stub-shared-memory.ts';
import { encodeStubFrame, StubFrameReader, type StubFrame, type StubHeader } from './stub-wire.ts';

/** The stub script: beside this module in src/ (and in dist/, where the build copies it). */
export const STUB_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'stub', 'herd_python_stub.py');

export interface StubProcessOptions {
  executable: string;
  modelFile: string;
  /** The allow-listed environment (createChildProcessEnv); Herd's own holds secrets the model must not see. */
  env: Readonly<Record<string, string>>;
  /** Names the instance in log lines and errors, e.g. `simple_identity_0` (model/version/instance). */
  label: string;
  log: (line: string) => void;
  /** Frames that are not replies to a command. */
  onFrame: (frame: StubFrame) => void;
  /** Called once when the process is gone, with why; not called after close(). */
  onExit: (error: HerdError) => void;
  /** The segment large tensors cross through; this process owns it from now on. */
  sharedMemory?: StubSharedMemory | undefined;
  /** How long the stub polls the pipe for the next frame before it sleeps (0: it sleeps at once). */
  pollMicroseconds?: number;
}

interface Waiter {
  resolve: (frame: StubFrame) => void;
  reject: (error: HerdError) => void;
}

export class PythonStubProcess {
  private readonly child: ChildProcess;
  private readonly toStub: Writable;
  private readonly waiters = new Map<number, Waiter>();
  private seq = 0;
  private exited: HerdError | undefined;
  private closing = false;
  private numpyMissing: string | undefined;
  private readonly stderrTail: string[] = [];

  constructor(private readonly options: StubProcessOptions) {
    if (!existsSync(STUB_SCRIPT)) {
      options.sharedMemory?.close();
      throw new HerdError('INTERNAL', `python backend: stub script missing at ${STUB_SCRIPT}`);
    }
    const shm = options.sharedMemory;
    const extra = [...(shm?.handle !== undefined ? ['--shm', '5', String(shm.size)] : []), ...(options.pollMicroseconds ? ['--poll-us', String(options.pollMicroseconds)] : [])];
    this.child = spawn(options.executable, [STUB_SCRIPT, options.modelFile, '3', '4', ...extra], {
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe', ...(shm?.handle !== undefined ? [shm.handle] : [])],
      // Unbuffered so a model's print() reaches the log when it happens; no __pycache__ in the
      // model folder, whose fingerprint poll mode watches.
      env: { ...options.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
    });
    // The stub holds the segment through its descriptor now: the name is not needed, and without it
    // nothing is left in /dev/shm whatever happens to either process.
    shm?.unlink();
    this.toStub = this.child.stdio[3] as Writable;
    const fromStub = this.child.stdio[4] as Readable;
    const reader = new StubFrameReader();
    fromStub.on('data', (chunk: Buffer) => {
      let frames: StubFrame[];
      try {
        frames = reader.push(chunk);
      } catch (err) {
        this.options.log(`python model ${options.label}: ${(err as Error).message}; stopping the stub`);
        this.child.kill('SIGKILL');
        return;
      }
      for (const frame of frames) this.route(frame);
    });
    this.forwardLines(this.child.stdout as Readable, 'stdout');
    this.forwardLines(this.child.stderr as Readable, 'stderr');
    // A write to a stub that just died fails with EPIPE; the exit handler reports it.
    this.toStub.on('error', () => undefined);
    fromStub.on('error', () => undefined);
    this.child.on('error', (err: NodeJS.ErrnoException) => {
      const message =
        err.code === 'ENOENT'
          ? `python backend: interpreter '${options.executable}' not found (set --backend-config=python,python-executable=PATH or serving.backend_config.python.python-executable)`
          : `python backend: cannot start '${options.executable}': ${err.message}`;
      this.finish(new HerdError('UNAVAILABLE', message));
    });
    this.child.on('close', (code, signal) => this.finish(this.describeExit(code, signal)));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The segment this stub maps, if it has one; closed once the process is gone. */
  get sharedMemory(): StubSharedMemory | undefined {
    return this.exited ? undefined : this.options.sharedMemory;
  }

  /** Sends a command and resolves with the frame that answers it (same `seq`). */
  call(header: StubHeader, parts: readonly Uint8Array[] = []): Promise<StubFrame> {
    if (this.exited) return Promise.reject(this.exited);
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiters.set(seq, { resolve, reject });
      this.send({ ...header, seq }, parts);
    });
  }

  /** Sends a frame that gets no reply (BLS answers, cancellations). */
  send(header: StubHeader, parts: readonly Uint8Array[] = []): void {
    if (this.exited) return;
    const frame = encodeStubFrame(header, parts);
    // cork/uncork: one writev for the frame's pieces.
    this.toStub.cork();
    for (const piece of frame) this.toStub.write(piece);
    this.toStub.uncork();
  }

  /** Ends the process: closes its input (the stub exits on EOF), then SIGKILL after `graceMs`. */
  async close(graceMs = 5000): Promise<void> {
    this.closing = true;
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('close', () => resolve()));
    this.toStub.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(timer);
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  private route(frame: StubFrame): void {
    const seq = frame.header['seq'];
    if (typeof seq === 'number' && frame.header.type !== 'bls_request') {
      const waiter = this.waiters.get(seq);
      if (waiter) {
        this.waiters.delete(seq);
        waiter.resolve(frame);
        return;
      }
    }
    this.options.onFrame(frame);
  }

  private forwardLines(stream: Readable, name: 'stdout' | 'stderr'): void {
    const lines = createInterface({ input: stream, crlfDelay: Infinity });
    lines.on('line', (line) => {
      if (name === 'stderr' && line.startsWith('HERD_NUMPY_MISSING ')) {
        this.numpyMissing = line.slice('HERD_NUMPY_MISSING '.length);
        return;
      }
      if (name === 'stderr') {
        this.stderrTail.push(line);
        if (this.stderrTail.length > 20) this.stderrTail.shift();
      }
      this.options.log(`python model ${this.options.label} ${name}: ${line}`);
    });
  }

  private describeExit(code: number | null, signal: NodeJS.Signals | null): HerdError {
    if (this.numpyMissing !== undefined) {
      return new HerdError(
        'UNAVAILABLE',
        `python backend needs numpy, and the interpreter ${this.numpyMissing.split(':')[0]} ('${this.options.executable}') has none: install numpy for it (Debian: apt-get install python3-numpy) or point python-executable at one that has it`,
      );
    }
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const last = this.stderrTail.at(-1);
    return new HerdError('UNAVAILABLE', `python model instance ${this.options.label}: the stub process ${how}${last && !signal ? ` (last stderr line: ${last})` : ''}`);
  }

  private finish(error: HerdError): void {
    if (this.exited) return;
    this.exited = error;
    this.options.sharedMemory?.close();
    for (const waiter of this.waiters.values()) waiter.reject(error);
    this.waiters.clear();
    if (!this.closing) this.options.onExit(error);
  }
}
