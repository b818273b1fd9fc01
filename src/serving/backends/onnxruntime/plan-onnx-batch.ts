// Turns the requests of one execute() into session runs, as Triton's onnxruntime backend batches: each
// request is validated alone, those that can be concatenated along dim 0 share one run, and each run's
// outputs are later cut back into per-request views (collectOnnxBatchResults).
import { type HerdError, internal, toHerdError } from '../../../core/errors.ts';
import type { Tensor } from '../../../core/tensor.ts';
import type { InferenceRequest, InferenceResult } from '../backend.ts';
import { concatBatchTensors } from './concat-batch-tensors.ts';
import type { SessionRunResult } from './onnx-session-runner.ts';
import type { HostedRun } from './onnx-session-host.ts';
import { sliceBatchTensor } from './slice-batch-tensor.ts';
import { validateOnnxRequest, type OnnxRequestRules, type ValidatedOnnxRequest } from './validate-onnx-request.ts';

/** A request's place in a run. */
export interface BatchMember {
  /** Position in the execute() call. */
  index: number;
  /** First row of the request in the run's batch dim. */
  offset: number;
  batchSize: number;
  /** What the request gets back, in its order. */
  outputNames: string[];
}

/** A run as a host takes it (ownsInputs: true only when the inputs were concatenated), with its requests' places. */
export interface PlannedRun extends HostedRun {
  members: BatchMember[];
}

export interface OnnxBatchPlan {
  /** One per request of the call. */
  requestCount: number;
  runs: PlannedRun[];
  /** Requests that failed validation, by index; they are in no run. */
  rejected: Map<number, HerdError>;
}

interface Group {
  members: BatchMember[];
  requests: InferenceRequest[];
  batchSize: number;
}

/**
 * Requests may share a run when they have the same inputs with the same datatypes and non-batch dims
 * (input order aside). The scheduler already batches by such a key; checking again keeps direct callers
 * and ragged inputs (whose dims may differ) correct: they fall back to runs of their own.
 */
function createConcatKey(request: InferenceRequest): string {
  // Built by hand rather than JSON.stringify of arrays: it runs for every request of every batch. The quoted
  // name keeps keys unambiguous; sorting whole parts orders them by name, as names are unique in a request.
  const parts = new Array<string>(request.inputs.length);
  request.inputs.forEach((t, i) => {
    let part = `${JSON.stringify(t.name)}${t.datatype}`;
    for (let d = 1; d < t.shape.length; d++) part += `,${t.shape[d]}`;
    parts[i] = part;
  });
  if (parts.length > 1) parts.sort();
  return parts.join(';');
}

function createRun(group: Group, outputOrder: readonly string[]): PlannedRun {
  const { members, requests, batchSize } = group;
  // The outputs any member asked for, in the model's order (a model has a handful: a scan, no Set).
  const outputNames = outputOrder.filter((name) => members.some((m) => m.outputNames.includes(name)));
  if (requests.length === 1) return { inputs: requests[0].inputs, outputNames, ownsInputs: false, members, batchSize };
  const inputs = requests[0].inputs.map((first) => concatBatchTensors(requests.map((r) => r.inputs.find((t) => t.name === first.name) as Tensor)));
  return { inputs, outputNames, ownsInputs: true, members, batchSize };
}

/** Validates every request and groups the valid ones into runs; never throws for a bad request. */
export function planOnnxBatch(rules: OnnxRequestRules, requests: readonly InferenceRequest[]): OnnxBatchPlan {
  const rejected = new Map<number, HerdError>();
  const groups: Group[] = [];
  const open = new Map<string, Group>();
  requests.forEach((request, index) => {
    let valid: ValidatedOnnxRequest;
    try {
      valid = validateOnnxRequest(rules, request);
    } catch (err) {
      rejected.set(index, toHerdError(err));
      return;
    }
    // A model without a batch dim (max_batch_size 0) cannot be concatenated: one run per request.
    // A lone request needs no key (the common unbatched call stays as cheap as before).
    const key = rules.maxBatchSize > 0 && requests.length > 1 ? createConcatKey(request) : undefined;
    let group = key === undefined ? undefined : open.get(key);
    if (!group || group.batchSize + valid.batchSize > rules.maxBatchSize) {
      group = { members: [], requests: [], batchSize: 0 };
      groups.push(group);
      if (key !== undefined) open.set(key, group);
    }
    group.members.push({ index, offset: group.batchSize, batchSize: valid.batchSize, outputNames: valid.outputNames });
    group.requests.push(request);
    group.batchSize += valid.batchSize;
  });
  return { requestCount: requests.length, runs: groups.map((g) => createRun(g, rules.outputs)), rejected };
}

/** Each member's outputs: the run's own tensors for a run of one, row views on them otherwise. */
function splitRunOutputs(model: string, run: PlannedRun, outputs: readonly Tensor[]): Tensor[][] {
  const byName = new Map(outputs.map((t) => [t.name, t]));
  if (run.members.length > 1) {
    for (const t of outputs) {
      if (t.shape[0] !== run.batchSize) {
        throw internal(
          `model '${model}': output '${t.name}' has shape [${t.shape.join(',')}], whose first dimension is not the ` +
            `batch size ${run.batchSize} of the ${run.members.length} requests run together, so it cannot be split between them`,
        );
      }
    }
  }
  return run.members.map((m) =>
    m.outputNames.map((name) => {
      const tensor = byName.get(name);
      if (!tensor) throw internal(`model '${model}' produced no output '${name}'`);
      return run.members.length === 1 ? tensor : sliceBatchTensor(tensor, m.offset, m.batchSize);
    }),
  );
}

/** One result per request of the plan, in call order: its rejection, its run's failure, or its outputs. */
export function collectOnnxBatchResults(model: string, plan: OnnxBatchPlan, runResults: readonly SessionRunResult[]): InferenceResult[] {
  if (runResults.length !== plan.runs.length) {
    throw internal(`model '${model}': got ${runResults.length} run results for ${plan.runs.length} runs`);
  }
  const results = new Array<InferenceResult | undefined>(plan.requestCount);
  for (const [index, error] of plan.rejected) results[index] = { ok: false, error };
  plan.runs.forEach((run, i) => {
    const ran = runResults[i];
    let split: Tensor[][];
    try {
      if (!ran.ok) throw ran.error;
      split = splitRunOutputs(model, run, ran.outputs);
    } catch (err) {
      // One session.run for all members: its failure is every member's failure.
      const error = toHerdError(err);
      for (const m of run.members) results[m.index] = { ok: false, error };
      return;
    }
    run.members.forEach((m, j) => {
      results[m.index] = { ok: true, outputs: split[j] };
    });
  });
  return results.map((r, i) => r ?? { ok: false, error: internal(`model '${model}': request ${i} of the batch got no result`) });
}
