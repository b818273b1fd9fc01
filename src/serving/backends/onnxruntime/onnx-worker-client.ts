// Main-thread end of one life of an ONNX instance's worker thread: starts it, matches replies to calls, and turns
// a crash (uncaught error, unexpected exit) into failed calls instead of hangs; onnx-worker-host.ts restarts it.
import { Worker } from 'node:worker_threads';
import { internal, unavailable, type HerdError } from '../../../core/errors.ts';
import { convertWireToError, type MainToWorkerMessage, type OnnxWorkerData, type RanMessage, type WireRun, type WorkerToMainMessage } from './onnx-worker-protocol.ts';

export const ONNX_WORKER_URL = new URL('./onnx-worker-bootstrap.mjs', import.meta.url);

export interface OnnxWorkerStartOptions {
  /** Triton's instance name (`my_model_0_1`), used in errors and as the thread's name. */
  instanceName: string;
  workerData: OnnxWorkerData;
  /** The worker's entry file; tests substitute one that misbehaves. */
  workerUrl?: URL;
  /** Called once if the thread dies after it has loaded (not for a failed start: start() rejects then). */
  onCrash?: (reason: string) => void;
}

type State = 'starting' | 'ready' | 'closing' | 'closed' | 'crashed';

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** A message as a caller writes it; #call numbers it. */
type CallMessage = DistributiveOmit<MainToWorkerMessage, 'id'>;

interface Settlers<T> {
  resolve(value: T): void;
  reject(error: HerdError): void;
}

export class OnnxWorkerClient {
  readonly #name: string;
  readonly #worker: Worker;
  readonly #pending = new Map<number, Settlers<WorkerToMainMessage>>();
  readonly #onCrash: ((reason: string) => void) | undefined;
  #modelInputs: readonly string[] = [];
  #nextId = 1;
  #state: State = 'starting';
  #crashReason = '';
  #loading: Settlers<void> | undefined;
  #closing: Promise<void> | undefined;

  private constructor(options: OnnxWorkerStartOptions, loading: Settlers<void>) {
    this.#name = options.instanceName;
    this.#onCrash = options.onCrash;
    this.#loading = loading;
    // execArgv [] rather than the parent's: tsx's loader flags do nothing for a worker's entry on Node 20
    // (the bootstrap registers tsx itself) and slow every worker start (docs/decisions/worker-exec-argv.md).
    this.#worker = new Worker(options.workerUrl ?? ONNX_WORKER_URL, {
      workerData: options.workerData,
      execArgv: [],
      name: options.instanceName,
    });
    this.#worker.on('message', (message: WorkerToMainMessage) => this.#onMessage(message));
    // Without an 'error' listener an uncaught error in the worker would be rethrown here and kill the server.
    this.#worker.on('error', (err: Error) => this.#crash(err.message));
    this.#worker.on('messageerror', (err: Error) => this.#crash(`unreadable message from the worker: ${err.message}`));
    this.#worker.on('exit', (code: number) => {
      if (this.#state !== 'closing' && this.#state !== 'closed') this.#crash(`worker thread exited with code ${code}`);
    });
  }

  /** Resolves once the worker has opened the session and validated the config; rejects with its load error. */
  static async start(options: OnnxWorkerStartOptions): Promise<OnnxWorkerClient> {
    let settlers: Settlers<void> | undefined;
    const loaded = new Promise<void>((resolve, reject) => {
      settlers = { resolve, reject };
    });
    const client = new OnnxWorkerClient(options, settlers!);
    try {
      await loaded;
    } catch (err) {
      await client.close();
      throw err;
    }
    return client;
  }

  /** The ONNX file's input names, as the worker read them at load. */
  get modelInputs(): readonly string[] {
    return this.#modelInputs;
  }

  /** Loaded and alive: run() can be called. */
  get ready(): boolean {
    return this.#state === 'ready';
  }

  /** Runs session.run calls; rejects with INTERNAL if the worker crashes meanwhile, UNAVAILABLE once it has. */
  async run(runs: WireRun[], transfer: readonly ArrayBuffer[]): Promise<RanMessage> {
    if (this.#state !== 'ready') throw this.#unavailableError();
    const reply = await this.#call({ type: 'run', runs }, transfer);
    if (reply.type !== 'ran') throw internal(`model instance ${this.#name}: unexpected '${reply.type}' reply to a run`);
    return reply;
  }

  /** Releases the session, then ends the thread. Idempotent; safe after a crash. */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const release = this.#state === 'ready';
    this.#state = 'closing';
    try {
      // Release before terminating: terminate() stops the thread without ORT's session cleanup.
      if (release) await this.#call({ type: 'release' }, []);
    } finally {
      await this.#worker.terminate();
      this.#state = 'closed';
    }
  }

  #call(message: CallMessage, transfer: readonly ArrayBuffer[]): Promise<WorkerToMainMessage> {
    if (this.#state === 'crashed' || this.#state === 'closed') return Promise.reject(this.#unavailableError());
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      try {
        this.#worker.postMessage({ ...message, id }, transfer);
      } catch (err) {
        // postMessage throws synchronously (e.g. DataCloneError) before anything reached the worker.
        this.#pending.delete(id);
        reject(internal(`model instance ${this.#name}: cannot send the batch to its worker: ${err instanceof Error ? err.message : String(err)}`));
      }
      this.#updateRef();
    });
  }

  #onMessage(message: WorkerToMainMessage): void {
    if (message.type === 'loaded') {
      this.#modelInputs = message.modelInputs;
      this.#state = 'ready';
      this.#loading?.resolve();
      this.#loading = undefined;
    } else if (message.type === 'load-failed') {
      this.#state = 'closing';
      this.#loading?.reject(convertWireToError(message.error));
      this.#loading = undefined;
    } else {
      const call = this.#pending.get(message.id);
      this.#pending.delete(message.id);
      if (message.type === 'failed') call?.reject(convertWireToError(message.error));
      else call?.resolve(message);
    }
    this.#updateRef();
  }

  #crash(reason: string): void {
    if (this.#state === 'crashed' || this.#state === 'closed') return;
    const wasReady = this.#state === 'ready';
    this.#state = 'crashed';
    this.#crashReason = reason;
    const error = internal(`model instance ${this.#name} crashed: ${reason}`);
    this.#loading?.reject(error);
    this.#loading = undefined;
    for (const call of this.#pending.values()) call.reject(error);
    this.#pending.clear();
    // After 'messageerror' the thread may still be alive; after 'error'/'exit' this is a no-op.
    void this.#worker.terminate();
    if (wasReady) this.#onCrash?.(reason);
  }

  #unavailableError(): HerdError {
    if (this.#state === 'crashed') return unavailable(`model instance ${this.#name} is unavailable: it crashed (${this.#crashReason})`);
    return unavailable(`model instance ${this.#name} is ${this.#state === 'starting' ? 'still loading' : 'shut down'}`);
  }

  /**
   * An idle worker must not keep the process alive (a forgotten unload would hang exit); one with calls
   * in flight must, or a script awaiting a result could exit under it.
   */
  #updateRef(): void {
    if (this.#pending.size > 0 || this.#state === 'starting') this.#worker.ref();
    else this.#worker.unref();
  }
}
