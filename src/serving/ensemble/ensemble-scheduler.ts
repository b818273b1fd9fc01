// Runs one ensemble's requests as Triton's ensemble scheduler does: each step starts as soon as every
// tensor its input_map names exists, independent steps run concurrently, and each step goes through
// the serving side's own inference path (so its model's batcher, queue policy and statistics apply).
// An ensemble with a decoupled step is itself decoupled: every response of that step runs the steps
// downstream of it again, and each completed set of ensemble outputs is one response of the ensemble.
import { cancelled, HerdError, toHerdError } from '../../core/errors.ts';
import type { Tensor } from '../../core/tensor.ts';
import type { ComputeDurations, InferenceRequest, InferenceResult, ResponseSender } from '../backends/backend.ts';
import type { InferAnswer, InferCall, RequestedOutput } from '../infer-call.ts';
import type { InferStreamEvent } from '../response-stream.ts';
import type { ModelConfig, ModelEnsembleStep } from '../model-config/model-config.ts';
import type { Scheduler } from '../scheduler/model-scheduler.ts';
import type { ModelStats } from '../stats.ts';

/** The serving side's inference path, as the ensemble calls it for each step. */
export type EnsembleStepRunner = (call: InferCall) => Promise<InferAnswer>;
/** The streaming inference path, for decoupled steps: every response of the step, ending with `final`. */
export type EnsembleStepStreamer = (call: InferCall, signal: AbortSignal) => AsyncIterable<InferStreamEvent<InferAnswer>>;

export interface EnsembleSchedulerOptions {
  config: ModelConfig;
  stats: ModelStats;
  runStep: EnsembleStepRunner;
  /**
   * Per step, whether its model batches (max_batch_size > 0). A non-batching ensemble feeds a batching
   * step as one batch element: Herd adds the batch dim of 1 on the way in and drops it on the way out
   * (Triton accepts such an ensemble at load, then refuses the step's shapes at run time).
   */
  stepBatches: readonly boolean[];
  /** Per step, whether its model is decoupled; such steps go through `streamStep`. */
  stepDecoupled?: readonly boolean[];
  streamStep?: EnsembleStepStreamer;
}

/** One step, read once at load: its mappings as entry lists and the outputs it asks its model for. */
interface StepPlan {
  step: ModelEnsembleStep;
  inputs: readonly [string, string][];
  outputs: readonly [string, string][];
  /** Shared by every request of the step; nothing downstream changes it. */
  requested: RequestedOutput[];
  addsBatchDim: boolean;
  decoupled: boolean;
}

/**
 * Where a streaming request's tensors live. The root holds the ensemble inputs; each response of a
 * decoupled step opens a child holding that response's tensors, where the steps fed by them run. Triton
 * refuses at load a step fed from two decoupled lineages, so a step finds all its inputs in one context.
 */
interface StreamContext {
  tensors: Map<string, Tensor | typeof ABSENT>;
  started: Uint8Array;
  parent: StreamContext | undefined;
}

/** One streaming request: the first failure, and the signal that stops its decoupled steps. */
interface StreamRun {
  request: InferenceRequest;
  compute: ComputeDurations;
  controller: AbortController;
  failure: HerdError | undefined;
  /** Responses sent so far. */
  responses: number;
}

/** Ensemble tensors that a request leaves out (optional inputs): present, but with no value. */
const ABSENT = null;

export class EnsembleScheduler implements Scheduler {
  private readonly plans: readonly StepPlan[];
  private inFlight = 0;
  private closed = false;
  private drainWaiters: (() => void)[] = [];

  constructor(private readonly options: EnsembleSchedulerOptions) {
    const batchless = options.config.max_batch_size === 0;
    this.plans = (options.config.ensemble_scheduling?.step ?? []).map((step, i) => ({
      step,
      inputs: Object.entries(step.input_map),
      outputs: Object.entries(step.output_map),
      requested: Object.keys(step.output_map).map((name) => ({ name })),
      addsBatchDim: batchless && options.stepBatches[i] === true,
      decoupled: options.stepDecoupled?.[i] === true,
    }));
  }

  async submit(request: InferenceRequest): Promise<InferenceResult> {
    const config = this.options.config;
    if (this.closed) return this.fail(new HerdError('UNAVAILABLE', `model '${config.name}' is unloading`), 0);
    if (request.responseSender) return this.submitStreaming(request, request.responseSender);
    const started = process.hrtime.bigint();
    this.inFlight += 1;
    try {
      const compute: ComputeDurations = { inputNs: 0, inferNs: 0, outputNs: 0 };
      const tensors = await this.runGraph(request, compute);
      const wanted = request.requestedOutputs.length > 0 ? request.requestedOutputs : config.output.map((o) => o.name);
      const outputs: Tensor[] = [];
      for (const name of wanted) {
        const tensor = tensors.get(name);
        if (!tensor) {
          throw new HerdError('INVALID_ARG', `in ensemble '${config.name}', unexpected deadlock, at least one output is not set while no more ensemble steps can be made`);
        }
        outputs.push({ ...tensor, name });
      }
      const totalNs = Number(process.hrtime.bigint() - started);
      const batch = config.max_batch_size > 0 ? (request.inputs[0]?.shape[0] ?? 1) : 1;
      // Triton reports an ensemble's compute time as the sum of its composing requests' and no queue time of its own.
      this.options.stats.recordSuccess(
        { queueNs: 0, computeInputNs: compute.inputNs, computeInferNs: compute.inferNs, computeOutputNs: compute.outputNs, totalNs },
        batch,
        Date.now(),
      );
      this.options.stats.recordExecution(Math.max(1, batch), compute.inputNs, compute.inferNs, compute.outputNs);
      return { ok: true, outputs, compute };
    } catch (err) {
      return this.fail(toHerdError(err), Number(process.hrtime.bigint() - started));
    } finally {
      this.inFlight -= 1;
      this.checkDrained();
    }
  }

  /**
   * A decoupled ensemble's request: responses go through the sender as their outputs complete, and the
   * final flag follows once every step, and every response of every decoupled step, has been handled.
   * A failure cancels the decoupled steps still streaming and ends the request with the error.
   */
  private async submitStreaming(request: InferenceRequest, sender: ResponseSender): Promise<InferenceResult> {
    const config = this.options.config;
    const started = process.hrtime.bigint();
    this.inFlight += 1;
    const run: StreamRun = {
      request,
      compute: { inputNs: 0, inferNs: 0, outputNs: 0 },
      controller: new AbortController(),
      failure: undefined,
      responses: 0,
    };
    const onCancel = () => run.controller.abort(sender.signal.reason);
    if (sender.signal.aborted) onCancel();
    else sender.signal.addEventListener('abort', onCancel, { once: true });
    try {
      const root: StreamContext = { tensors: new Map(), started: new Uint8Array(this.plans.length), parent: undefined };
      for (const input of request.inputs) root.tensors.set(input.name, input);
      for (const input of config.input) if (!root.tensors.has(input.name)) root.tensors.set(input.name, ABSENT);
      await this.runContext(run, root);
      const totalNs = Number(process.hrtime.bigint() - started);
      if (run.failure === undefined && sender.signal.aborted) {
        run.failure = cancelled(`Request cancelled: the client went away before ensemble '${config.name}' finished`);
      }
      if (run.failure !== undefined) {
        if (!sender.closed) sender.send({ ok: false, error: run.failure }, true);
        return this.fail(run.failure, totalNs);
      }
      // Outputs that need no decoupled step: one last response, as a non-decoupled ensemble answers.
      const outputs = run.responses === 0 ? this.collectOutputs(request, root) : undefined;
      if (outputs !== undefined && !sender.closed) sender.send({ ok: true, outputs, compute: run.compute }, true);
      // A decoupled step may answer nothing: the final flag alone then, as Triton sends it.
      else sender.close();
      const batch = config.max_batch_size > 0 ? (request.inputs[0]?.shape[0] ?? 1) : 1;
      this.options.stats.recordSuccess(
        { queueNs: 0, computeInputNs: run.compute.inputNs, computeInferNs: run.compute.inferNs, computeOutputNs: run.compute.outputNs, totalNs },
        batch,
        Date.now(),
      );
      this.options.stats.recordExecution(Math.max(1, batch), run.compute.inputNs, run.compute.inferNs, run.compute.outputNs);
      return { ok: true, outputs: [], compute: run.compute };
    } catch (err) {
      const error = toHerdError(err);
      if (!sender.closed) sender.send({ ok: false, error }, true);
      return this.fail(error, Number(process.hrtime.bigint() - started));
    } finally {
      sender.signal.removeEventListener('abort', onCancel);
      this.inFlight -= 1;
      this.checkDrained();
    }
  }

  /** Runs every step that becomes ready in `context`; resolves when all of them (and their children) are done. */
  private runContext(run: StreamRun, context: StreamContext): Promise<void> {
    const config = this.options.config;
    const plans = this.plans;
    let running = 0;
    return new Promise((resolve) => {
      const startReady = () => {
        if (run.failure !== undefined || run.controller.signal.aborted) return;
        for (let index = 0; index < plans.length; index++) {
          if (context.started[index] === 1) continue;
          const plan = plans[index] as StepPlan;
          if (plan.inputs.length === 0 || !plan.inputs.every(([, name]) => context.tensors.has(name))) continue;
          context.started[index] = 1;
          running += 1;
          const done = plan.decoupled
            ? this.runDecoupledStep(run, context, plan)
            : this.runStep(run.request, plan, context.tensors).then((a) => this.storeOutputs(run, context, plan, a));
          done.then(
            () => finished(),
            (err: unknown) => {
              run.failure ??= stepError(config.name, plan.step, err);
              run.controller.abort();
              finished();
            },
          );
        }
      };
      const finished = () => {
        running -= 1;
        startReady();
        if (running === 0) resolve();
      };
      startReady();
      if (running === 0) resolve();
    });
  }

  /**
   * Every response of a decoupled step opens a child context where the steps it feeds run; once they are
   * done, the child's outputs are one response of the ensemble. Responses are handled one after the
   * other, so the ensemble answers in the step's order.
   */
  private async runDecoupledStep(run: StreamRun, context: StreamContext, plan: StepPlan): Promise<void> {
    const streamStep = this.options.streamStep;
    if (!streamStep) throw new HerdError('UNSUPPORTED', `model '${plan.step.model_name}' is decoupled and this server has no streaming path for ensemble steps`);
    for await (const event of streamStep(this.createStepCall(run.request, plan, context.tensors), run.controller.signal)) {
      if (event.error !== undefined) throw event.error;
      if (event.answer === undefined) continue;
      const child: StreamContext = { tensors: new Map(), started: new Uint8Array(this.plans.length), parent: context };
      // Steps already started upstream never run again in a child.
      child.started.set(context.started);
      this.storeOutputs(run, child, plan, event.answer);
      await this.runContext(run, child);
      if (run.failure !== undefined || run.controller.signal.aborted) return;
      const outputs = this.collectOutputs(run.request, child);
      const sender = run.request.responseSender;
      if (outputs !== undefined && sender && !sender.closed) {
        run.responses += 1;
        sender.send({ ok: true, outputs, compute: run.compute }, false);
      }
    }
  }

  private storeOutputs(run: StreamRun, context: StreamContext, plan: StepPlan, answer: InferAnswer): void {
    addCompute(run.compute, answer.compute);
    for (const [output, tensorName] of plan.outputs) {
      const produced = answer.outputs.find((t) => t.name === output);
      if (!produced) throw new HerdError('INTERNAL', `model '${plan.step.model_name}' did not produce output '${output}'`);
      context.tensors.set(tensorName, plan.addsBatchDim && produced.shape[0] === 1 ? { ...produced, shape: produced.shape.slice(1) } : produced);
    }
  }

  /** The ensemble's outputs as seen from `context` (its own tensors, then its ancestors'), or undefined while one is missing. */
  private collectOutputs(request: InferenceRequest, context: StreamContext): Tensor[] | undefined {
    const wanted = request.requestedOutputs.length > 0 ? request.requestedOutputs : this.options.config.output.map((o) => o.name);
    const outputs: Tensor[] = [];
    for (const name of wanted) {
      let tensor: Tensor | typeof ABSENT | undefined;
      for (let at: StreamContext | undefined = context; at && tensor === undefined; at = at.parent) tensor = at.tensors.get(name);
      if (!tensor) return undefined;
      outputs.push({ ...tensor, name });
    }
    return outputs;
  }

  refuseIfFull(): HerdError | undefined {
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight === 0) return;
    await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
  }

  /** Every ensemble tensor the request's steps produced, keyed by ensemble tensor name. */
  private runGraph(request: InferenceRequest, compute: ComputeDurations): Promise<Map<string, Tensor | typeof ABSENT>> {
    const config = this.options.config;
    const tensors = new Map<string, Tensor | typeof ABSENT>();
    for (const input of request.inputs) tensors.set(input.name, input);
    for (const input of config.input) if (!tensors.has(input.name)) tensors.set(input.name, ABSENT);
    const plans = this.plans;
    const started = new Uint8Array(plans.length);
    let running = 0;
    let failure: HerdError | undefined;
    return new Promise((resolve, reject) => {
      const startReady = () => {
        // A client gone away: the steps in flight finish (each saw the signal), the later ones never start.
        if (request.signal?.aborted) {
          failure ??= cancelled(`Request cancelled: the client went away before ensemble '${config.name}' finished`);
          return;
        }
        for (let index = 0; index < plans.length; index++) {
          if (started[index] === 1) continue;
          const plan = plans[index] as StepPlan;
          if (!plan.inputs.every(([, name]) => tensors.has(name))) continue;
          started[index] = 1;
          running += 1;
          this.runStep(request, plan, tensors).then(
            (answer) => finished(plan, answer, undefined),
            (err: unknown) => finished(plan, undefined, err),
          );
        }
      };
      // Triton answers the first failure once every step in flight has finished.
      const finished = (plan: StepPlan, answer: InferAnswer | undefined, err: unknown) => {
        running -= 1;
        if (failure === undefined) {
          if (answer) {
            addCompute(compute, answer.compute);
            for (const [output, tensorName] of plan.outputs) {
              const produced = answer.outputs.find((t) => t.name === output);
              if (!produced) {
                failure = new HerdError('INTERNAL', `in ensemble '${config.name}', model '${plan.step.model_name}' did not produce output '${output}'`);
                break;
              }
              tensors.set(tensorName, plan.addsBatchDim && produced.shape[0] === 1 ? { ...produced, shape: produced.shape.slice(1) } : produced);
            }
          } else {
            failure = stepError(config.name, plan.step, err);
          }
          if (failure === undefined) startReady();
        }
        if (running === 0) {
          if (failure) reject(failure);
          else resolve(tensors);
        }
      };
      startReady();
      if (running === 0) {
        if (failure) reject(failure);
        else resolve(tensors);
      }
    });
  }

  private runStep(request: InferenceRequest, plan: StepPlan, tensors: ReadonlyMap<string, Tensor | typeof ABSENT>): Promise<InferAnswer> {
    return this.options.runStep(this.createStepCall(request, plan, tensors));
  }

  private createStepCall(request: InferenceRequest, plan: StepPlan, tensors: ReadonlyMap<string, Tensor | typeof ABSENT>): InferCall {
    const inputs: Tensor[] = [];
    for (const [input, tensorName] of plan.inputs) {
      const tensor = tensors.get(tensorName);
      if (!tensor) continue;
      if (plan.addsBatchDim) inputs.push({ ...tensor, name: input, shape: [1, ...tensor.shape] });
      else inputs.push(tensor.name === input ? tensor : { ...tensor, name: input });
    }
    const name = this.options.config.name;
    const ensemble = request.ensemble === undefined ? name : `${request.ensemble}/${name}`;
    const call: InferCall = { modelName: plan.step.model_name, id: request.id, parameters: request.parameters, inputs, outputs: plan.requested, ensemble };
    if (plan.step.model_version >= 0) call.version = plan.step.model_version;
    if (request.caller !== undefined) call.caller = request.caller;
    if (request.signal !== undefined) call.signal = request.signal;
    // A traced ensemble's steps are traced too: each its own trace id, its model span under the ensemble's.
    if (request.trace !== undefined) call.trace = request.trace.child();
    return call;
  }

  private fail(error: HerdError, totalNs: number): InferenceResult {
    this.options.stats.recordFailure(totalNs, Date.now(), error.code === 'CANCELLED' ? 'CANCELED' : 'OTHER');
    return { ok: false, error };
  }

  private checkDrained(): void {
    if (this.inFlight !== 0 || this.drainWaiters.length === 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}

function addCompute(total: ComputeDurations, step: ComputeDurations | undefined): void {
  if (!step) return;
  total.inputNs += step.inputNs;
  total.inferNs += step.inferNs;
  total.outputNs += step.outputNs;
}

/** Triton prefixes a composing model's error with the ensemble; Herd also names the step's model. */
function stepError(ensemble: string, step: ModelEnsembleStep, err: unknown): HerdError {
  const error = toHerdError(err);
  return new HerdError(error.code, `in ensemble '${ensemble}', step '${step.model_name}': ${error.message}`, { cause: error, retryAfterSeconds: error.retryAfterSeconds });
}
