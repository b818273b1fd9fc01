// The default home of an instance's session: a worker thread (onnx-worker-client.ts), restarted on the next
// call after it crashes, with a growing delay between attempts so a model that keeps crashing cannot spin.
import { systemClock, type Clock } from '../../../core/clock.ts';
import { unavailable } from '../../../core/errors.ts';
import { convertTensorToWire, convertWireToTensor } from './convert-wire-tensor.ts';
import type { SessionBatchResult, SessionRunResult } from './onnx-session-runner.ts';
import type { HostedRun, OnnxSessionHost } from './onnx-session-host.ts';
import { OnnxWorkerClient, type OnnxWorkerStartOptions } from './onnx-worker-client.ts';
import { convertWireToError, type WireResult, type WireRun } from './onnx-worker-protocol.ts';

/**
 * The first restart after a crash is immediate: a one-off crash should cost only the batch it hit. Each
 * further failure in a row (a crash, or a restart that fails to load) doubles the wait, up to the cap;
 * a run that completes resets the count. Within the wait, calls fail fast with UNAVAILABLE.
 */
const FIRST_RETRY_DELAY_MS = 100;
const MAX_RETRY_DELAY_MS = 10_000;

export interface OnnxWorkerHostOptions extends Omit<OnnxWorkerStartOptions, 'onCrash'> {
  /** Time for the restart backoff; tests drive a ManualClock instead of sleeping. */
  clock?: Clock;
}

function convertWireToRunResult(result: WireResult): SessionRunResult {
  if (!result.ok) return { ok: false, error: convertWireToError(result.error) };
  return { ok: true, outputs: result.outputs.map(convertWireToTensor) };
}

export class OnnxWorkerHost implements OnnxSessionHost {
  readonly thread = 'worker';
  readonly #options: OnnxWorkerHostOptions;
  readonly #clock: Clock;
  #client: OnnxWorkerClient | undefined;
  #restarting: Promise<OnnxWorkerClient> | undefined;
  /** Crashes and failed restarts since the last completed run: sets the backoff. */
  #failures = 0;
  #lastFailureAt = 0;
  #lastFailure = '';
  #restarts = 0;
  #failedRestarts = 0;
  #closed = false;

  private constructor(options: OnnxWorkerHostOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
  }

  /** Resolves once the first worker has loaded; rejects with its load error (nothing is retried at load). */
  static async start(options: OnnxWorkerHostOptions): Promise<OnnxWorkerHost> {
    const host = new OnnxWorkerHost(options);
    host.#client = await host.#startClient();
    return host;
  }

  get modelInputs(): readonly string[] {
    return this.#client?.modelInputs ?? [];
  }

  get restartCount(): number {
    return this.#restarts;
  }

  get failedRestartCount(): number {
    return this.#failedRestarts;
  }

  async runBatch(runs: readonly HostedRun[]): Promise<SessionBatchResult> {
    const client = this.#client?.ready ? this.#client : await this.#restart();
    // Concatenated inputs are ours and move; a lone request's arrays are the caller's, so they are copied
    // (exactly the viewed bytes). Either way each input costs one copy at most.
    const transfer = new Set<ArrayBuffer>();
    const wire: WireRun[] = runs.map((run) => ({
      inputs: run.inputs.map((t) => convertTensorToWire(t, run.ownsInputs ? 'move' : 'copy', transfer)),
      outputNames: run.outputNames,
    }));
    const reply = await client.run(wire, [...transfer]);
    this.#failures = 0;
    return { results: reply.results.map(convertWireToRunResult), inputEnd: reply.inputEnd, inferEnd: reply.inferEnd };
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#restarting?.catch(() => undefined);
    await this.#client?.close();
  }

  #startClient(): Promise<OnnxWorkerClient> {
    return OnnxWorkerClient.start({ ...this.#options, onCrash: (reason) => this.#noteFailure(reason) });
  }

  #noteFailure(reason: string): void {
    this.#failures += 1;
    this.#lastFailureAt = this.#clock.now();
    this.#lastFailure = reason;
  }

  #restart(): Promise<OnnxWorkerClient> {
    const name = this.#options.instanceName;
    if (this.#closed) return Promise.reject(unavailable(`model instance ${name} is shut down`));
    // Callers arriving during a restart wait for it rather than starting threads of their own.
    if (this.#restarting) return this.#restarting;
    const delay = this.#failures <= 1 ? 0 : Math.min(FIRST_RETRY_DELAY_MS * 2 ** (this.#failures - 2), MAX_RETRY_DELAY_MS);
    const wait = this.#lastFailureAt + delay - this.#clock.now();
    if (wait > 0) {
      return Promise.reject(
        unavailable(`model instance ${name} is unavailable: it crashed (${this.#lastFailure}); next restart attempt in ${Math.ceil(wait)} ms`, {
          retryAfterSeconds: Math.ceil(wait / 1000),
        }),
      );
    }
    this.#restarting = this.#replaceClient().finally(() => {
      this.#restarting = undefined;
    });
    return this.#restarting;
  }

  async #replaceClient(): Promise<OnnxWorkerClient> {
    const name = this.#options.instanceName;
    let client: OnnxWorkerClient;
    try {
      client = await this.#startClient();
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      this.#failedRestarts += 1;
      this.#noteFailure(reason);
      throw unavailable(`model instance ${name} crashed and could not be restarted: ${reason}`, { cause: err });
    }
    if (this.#closed) {
      await client.close();
      throw unavailable(`model instance ${name} is shut down`);
    }
    this.#client = client;
    this.#restarts += 1;
    return client;
  }
}
