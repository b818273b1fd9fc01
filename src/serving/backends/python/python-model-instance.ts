// One instance of a Python-backend model: its stub process, the execute round trip, and recovery.
// A stub that dies fails the requests it held and is started again (initialize runs anew); the
// other instances of the model keep serving meanwhile.
import { HerdError, toHerdError } from '../../../core/errors.ts';
import type { Backend, ExecutionMarks, InferenceRequest, InferenceResult, ResponseSender } from '../backend.ts';
import { convertStubResponse, type StubResponse } from './convert-stub-response.ts';
import { encodeStubBatch } from './convert-stub-tensors.ts';
import type { ModelTrace } from '../../infer-trace.ts';
import { CustomMetricRegistry } from '../../../metrics/custom-metric-registry.ts';
import { answerBlsCall, type BlsInference } from './python-bls-bridge.ts';
import { formatModelLogRecord, type ModelLogLevels } from './format-model-log.ts';
import { PythonStubMetrics } from './python-stub-metrics.ts';
import { PythonStubProcess } from './python-stub-process.ts';
import { StubSharedMemory } from './stub-shared-memory.ts';
import type { StubFrame } from './stub-wire.ts';

export interface PythonInstanceOptions {
  executable: string;
  modelFile: string;
  /** The stub's whole environment (createChildProcessEnv): never Herd's own. */
  env: Readonly<Record<string, string>>;
  /** `<model>/<version>/<instance>` for log lines and errors. */
  label: string;
  /** Triton's initialize(args) dict. */
  args: Record<string, string>;
  decoupled: boolean;
  /** Every output of the config: what a request that names none gets. */
  outputNames: readonly string[];
  timeoutMs: number;
  log: (line: string) => void;
  inference: BlsInference | undefined;
  /** Size of the stub's shared-memory segment for large tensors (0: none, everything crosses the pipe). */
  sharedMemoryBytes?: number;
  /** How long the stub polls for the next frame before it sleeps (see python-backend-options.ts). */
  pollMicroseconds?: number;
  /** Where pb_utils.MetricFamily's families live (the server's /metrics); default a registry of this instance's own. */
  metrics?: CustomMetricRegistry;
  /** The server's log settings now, for pb_utils.Logger's levels (none: every record shows). */
  logLevels?: () => ModelLogLevels;
}

/** A stub that keeps dying is restarted at most this often. */
const RESTART_MIN_INTERVAL_MS = 1000;

/** Starts the stub and runs initialize; rejects with the model's reason when that fails. */
export async function startPythonInstance(options: PythonInstanceOptions): Promise<PythonModelInstance> {
  const instance = new PythonModelInstance(options);
  await instance.start();
  return instance;
}

export class PythonModelInstance implements Backend {
  private stub: PythonStubProcess | undefined;
  private starting: Promise<PythonStubProcess> | undefined;
  private lastStart = 0;
  private lastError: HerdError | undefined;
  private unloading = false;
  private nextRid = 0;
  /** Executes sent to the stub and not answered yet. */
  private awaitingReply = 0;
  private readonly inflight = new Set<Promise<unknown>>();
  /** Decoupled requests not complete yet, by wire id: their responses arrive as 'response' frames. */
  private readonly open = new Map<number, { sender: ResponseSender; stop: () => void }>();
  /** BLS calls in progress, by the stub's call id: ResponseIterator.cancel() aborts one. */
  private readonly blsCalls = new Map<unknown, AbortController>();
  /** The traced request of the batch the stub is executing: its BLS calls are traced under its compute span. */
  private executingTrace: ModelTrace | undefined;
  /** The running stub's custom metrics, let go of when it ends. */
  private stubMetrics: PythonStubMetrics | undefined;

  constructor(private readonly options: PythonInstanceOptions) {}

  /** The running stub's process id (tests kill it to check recovery). */
  get pid(): number | undefined {
    return this.stub?.pid;
  }

  async start(): Promise<void> {
    await this.ensureStub();
  }

  async execute(requests: InferenceRequest[], marks?: ExecutionMarks): Promise<InferenceResult[]> {
    if (this.unloading) throw new HerdError('UNAVAILABLE', `python model ${this.options.label}: instance is unloading`);
    const run = this.run(requests, marks);
    this.inflight.add(run);
    try {
      return await run;
    } finally {
      this.inflight.delete(run);
    }
  }

  /** Decoupled models: responses reach each request's sender as the stub sends them, also after this resolves. */
  async executeDecoupled(requests: InferenceRequest[], marks?: ExecutionMarks): Promise<void> {
    if (this.unloading) throw new HerdError('UNAVAILABLE', `python model ${this.options.label}: instance is unloading`);
    const run = this.exchange(requests, marks, true).then(({ reply }) => {
      if (reply.header.type === 'execute_error') throw new HerdError('INTERNAL', String(reply.header['error']));
    });
    this.inflight.add(run);
    try {
      await run;
    } finally {
      this.inflight.delete(run);
    }
  }

  private async run(requests: InferenceRequest[], marks: ExecutionMarks | undefined): Promise<InferenceResult[]> {
    const { reply, shm } = await this.exchange(requests, marks, false);
    if (reply.header.type === 'execute_error') {
      const error = new HerdError('INTERNAL', String(reply.header['error']));
      return requests.map(() => ({ ok: false, error }));
    }
    const responses = reply.header['responses'];
    if (!Array.isArray(responses) || responses.length !== requests.length) {
      throw new HerdError(
        'INTERNAL',
        `python model ${this.options.label}: the stub answered ${Array.isArray(responses) ? responses.length : 'no'} responses for ${requests.length} requests`,
      );
    }
    return responses.map((r: StubResponse) => convertStubResponse(r, reply.body, this.options.label, shm));
  }

  /**
   * Sends one batch to the stub and waits for execute() to return there. The reply's large outputs are in
   * `shm` (the segment of the stub that answered), valid until the next execute on this instance.
   */
  private async exchange(requests: InferenceRequest[], marks: ExecutionMarks | undefined, decoupled: boolean): Promise<{ reply: StubFrame; shm: StubSharedMemory | undefined }> {
    const stub = await this.ensureStub();
    const shm = stub.sharedMemory;
    const batch = encodeStubBatch(
      requests.map((r) => r.inputs),
      shm,
    );
    const rids: number[] = [];
    const items = requests.map((request, i) => {
      const rid = ++this.nextRid;
      rids.push(rid);
      if (decoupled && request.responseSender) this.track(stub, rid, request.responseSender);
      return {
        rid,
        id: request.id,
        model: request.modelName,
        version: request.modelVersion,
        correlation_id: correlationIdOf(request),
        flags: (request.parameters['sequence_start'] === true ? 1 : 0) | (request.parameters['sequence_end'] === true ? 2 : 0),
        parameters: JSON.stringify(request.parameters),
        outputs: request.requestedOutputs.length > 0 ? request.requestedOutputs : this.options.outputNames,
        inputs: batch.inputs[i],
      };
    });
    // The segment's output half holds one reply at a time: only a batch with no other in flight may use it.
    const outputsInShm = shm !== undefined && this.awaitingReply === 0;
    let reply: StubFrame;
    const traced = requests.find((r) => r.trace !== undefined)?.trace;
    if (traced !== undefined) this.executingTrace = traced;
    this.awaitingReply++;
    const pending = stub.call({ type: 'execute', requests: items, ...(batch.slot ? { slot: batch.slot } : {}), ...(outputsInShm ? { shm_out: true } : {}) }, batch.parts);
    // After the execute frame: a cancel the stub reads before it knows the request would be lost.
    const unwatch = decoupled ? undefined : watchCancels(stub, requests, rids);
    try {
      reply = await pending;
      shm?.release(reply.header['released']);
    } catch (err) {
      const error = toHerdError(err);
      throw new HerdError('UNAVAILABLE', `${error.message} while executing this request; Herd restarts the instance`, { cause: err });
    } finally {
      unwatch?.();
      this.awaitingReply--;
      if (traced !== undefined && this.executingTrace === traced) this.executingTrace = undefined;
    }
    const arrived = process.hrtime.bigint();
    if (marks) {
      // compute_infer is the time execute() ran in Python, as the stub measured it; the round trip counts as input.
      const pythonNs = BigInt(typeof reply.header['execute_ns'] === 'number' ? Math.round(reply.header['execute_ns']) : 0);
      marks.inputEnd = arrived - pythonNs;
      marks.inferEnd = arrived;
    }
    // A failed decoupled batch: the scheduler answers the requests still open; they are no longer ours.
    if (decoupled && reply.header.type === 'execute_error') for (const rid of rids) this.untrack(rid);
    return { reply, shm: outputsInShm ? shm : undefined };
  }

  private track(stub: PythonStubProcess, rid: number, sender: ResponseSender): void {
    const onAbort = () => stub.send({ type: 'cancel', rids: [rid] });
    sender.signal.addEventListener('abort', onAbort, { once: true });
    this.open.set(rid, { sender, stop: () => sender.signal.removeEventListener('abort', onAbort) });
  }

  private untrack(rid: number): void {
    this.open.get(rid)?.stop();
    this.open.delete(rid);
  }

  /** A decoupled response from the stub: one response, the final flag, or both. */
  private deliver(frame: StubFrame): void {
    const rid = Number(frame.header['rid']);
    const entry = this.open.get(rid);
    if (!entry) return;
    const final = frame.header['final'] === true;
    const hasResponse = frame.header['outputs'] !== undefined || frame.header['error'] !== undefined;
    if (final) this.untrack(rid);
    if (entry.sender.closed) return;
    if (hasResponse) {
      let result: InferenceResult;
      try {
        result = convertStubResponse(frame.header as StubResponse, frame.body, this.options.label);
      } catch (err) {
        result = { ok: false, error: toHerdError(err) };
      }
      entry.sender.send(result, final);
    } else if (final) {
      entry.sender.close();
    }
  }

  /** The stub died: decoupled requests it still owed responses get the reason as their last one. */
  private failOpen(error: HerdError): void {
    for (const [rid, entry] of [...this.open]) {
      this.untrack(rid);
      if (!entry.sender.closed) entry.sender.send({ ok: false, error: new HerdError('UNAVAILABLE', `${error.message} before this request completed`) }, true);
    }
  }

  /** Waits for running batches, calls finalize() in the stub, then ends the process. */
  async unload(): Promise<void> {
    if (this.unloading) return;
    this.unloading = true;
    await Promise.allSettled([...this.inflight]);
    const stub = this.stub ?? (this.starting ? await this.starting.catch(() => undefined) : undefined);
    if (!stub) return;
    try {
      const reply = await withTimeout(stub.call({ type: 'finalize' }), this.options.timeoutMs, 'finalize()');
      if (typeof reply.header['error'] === 'string') {
        this.options.log(`python model ${this.options.label}: finalize() failed: ${String(reply.header['traceback'] ?? reply.header['error'])}`);
      }
    } catch (err) {
      this.options.log(`python model ${this.options.label}: ${toHerdError(err).message}`);
    } finally {
      await stub.close();
      this.stubMetrics?.release();
      this.failOpen(new HerdError('UNAVAILABLE', `python model ${this.options.label}: the instance was unloaded`));
    }
  }

  private ensureStub(): Promise<PythonStubProcess> {
    if (this.stub) return Promise.resolve(this.stub);
    if (this.starting) return this.starting;
    if (this.lastError && Date.now() - this.lastStart < RESTART_MIN_INTERVAL_MS) return Promise.reject(this.lastError);
    this.lastStart = Date.now();
    this.starting = this.spawnAndInitialize()
      .then(
        (stub) => {
          this.stub = stub;
          this.lastError = undefined;
          return stub;
        },
        (err: unknown) => {
          this.lastError = toHerdError(err);
          throw this.lastError;
        },
      )
      .finally(() => {
        this.starting = undefined;
      });
    return this.starting;
  }

  private async spawnAndInitialize(): Promise<PythonStubProcess> {
    const { label, log } = this.options;
    const metrics = new PythonStubMetrics(this.options.metrics ?? new CustomMetricRegistry(), (line) => log(`python model ${label}: ${line}`));
    this.stubMetrics = metrics;
    const stub: PythonStubProcess = new PythonStubProcess({
      executable: this.options.executable,
      modelFile: this.options.modelFile,
      env: this.options.env,
      label,
      log,
      onFrame: (frame) => (frame.header.type === 'metrics' ? metrics.handle(frame.header, (h) => stub.send(h)) : this.onFrame(stub, frame)),
      sharedMemory: this.options.sharedMemoryBytes ? StubSharedMemory.create(this.options.sharedMemoryBytes, log) : undefined,
      pollMicroseconds: this.options.pollMicroseconds ?? 0,
      onExit: (error) => {
        metrics.release();
        if (this.stub !== stub) return;
        this.stub = undefined;
        this.failOpen(error);
        if (this.unloading) return;
        log(`${error.message}; restarting it`);
        this.ensureStub().catch((err: unknown) => log(`python model ${label}: restart failed: ${toHerdError(err).message}`));
      },
    });
    try {
      const reply = await withTimeout(stub.call({ type: 'init', args: this.options.args, decoupled: this.options.decoupled }), this.options.timeoutMs, 'initialize()');
      if (reply.header.type === 'init_error') {
        log(`python model ${label}: initialize() failed:\n${String(reply.header['traceback'] ?? '')}`);
        throw new HerdError('UNAVAILABLE', `Failed to initialize Python model instance ${label}: ${String(reply.header['error'])}`);
      }
    } catch (err) {
      stub.kill();
      throw err;
    }
    return stub;
  }

  private onFrame(stub: PythonStubProcess, frame: StubFrame): void {
    const { header } = frame;
    switch (header.type) {
      case 'log': {
        const line = formatModelLogRecord(this.options.label, header, this.options.logLevels?.());
        if (line !== undefined) this.options.log(line);
        return;
      }
      case 'response':
        this.deliver(frame);
        return;
      case 'bls_request': {
        const controller = new AbortController();
        const call = header['call'];
        this.blsCalls.set(call, controller);
        void answerBlsCall(frame, this.options.inference, (h, parts) => stub.send(h, parts), this.options.label, controller.signal, this.executingTrace?.child()).finally(() =>
          this.blsCalls.delete(call),
        );
        return;
      }
      case 'bls_cancel':
        this.blsCalls.get(header['call'])?.abort();
        return;
      default:
        this.options.log(`python model ${this.options.label}: unexpected frame '${header.type}' from the stub, ignored`);
    }
  }
}

function correlationIdOf(request: InferenceRequest): number | string {
  const id = request.parameters['sequence_id'];
  return typeof id === 'number' || typeof id === 'string' ? id : 0;
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HerdError('UNAVAILABLE', `${what} did not finish within ${ms / 1000} s (stub-timeout-seconds)`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * An ordinary request whose client goes away while the stub runs it: the stub marks it, so the model's
 * request.is_cancelled() turns true (decoupled requests are watched through their sender instead).
 */
function watchCancels(stub: PythonStubProcess, requests: readonly InferenceRequest[], rids: readonly number[]): (() => void) | undefined {
  const stops: (() => void)[] = [];
  for (let i = 0; i < requests.length; i++) {
    const signal = requests[i]?.signal;
    if (signal === undefined) continue;
    const onAbort = () => stub.send({ type: 'cancel', rids: [rids[i]] });
    if (signal.aborted) {
      onAbort();
      continue;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    stops.push(() => signal.removeEventListener('abort', onAbort));
  }
  if (stops.length === 0) return undefined;
  return () => {
    for (const stop of stops) stop();
  };
}
