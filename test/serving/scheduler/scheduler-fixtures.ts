// A backend whose executions finish only when the test says so, recording each batch it was given.
import { HerdError } from '../../../src/core/errors.ts';
import type { Backend, InferenceRequest, InferenceResult } from '../../../src/serving/backends/backend.ts';
import type { SchedulerInstance } from '../../../src/serving/scheduler/model-scheduler.ts';

export interface GatedBackend {
  backend: Backend;
  batches: string[][];
  /** Finishes the oldest running execution. */
  release(): void;
  running(): number;
  unloaded: boolean;
}

export function gatedBackend(): GatedBackend {
  const gates: (() => void)[] = [];
  const state: GatedBackend = {
    batches: [],
    unloaded: false,
    release: () => gates.shift()?.(),
    running: () => gates.length,
    backend: {
      async execute(requests: InferenceRequest[]): Promise<InferenceResult[]> {
        state.batches.push(requests.map((r) => r.id));
        await new Promise<void>((r) => gates.push(r));
        if (requests.some((r) => r.id.startsWith('throw'))) throw new Error('backend exploded');
        return requests.map((r): InferenceResult => (r.id.startsWith('bad') ? { ok: false, error: new HerdError('INVALID_ARG', 'bad input') } : { ok: true, outputs: [] }));
      },
      async unload() {
        state.unloaded = true;
      },
    },
  };
  return state;
}

export const instance = (name: string, backend: Backend, extra: Partial<SchedulerInstance> = {}): SchedulerInstance => ({ name, backend, resources: [], priority: 1, ...extra });

export function request(id: string, options: { batch?: number; dims?: number[]; parameters?: InferenceRequest['parameters'] } = {}): InferenceRequest {
  const dims = options.dims ?? [4];
  const batch = options.batch ?? 1;
  return {
    id,
    modelName: 'm',
    modelVersion: 1,
    requestedOutputs: [],
    parameters: options.parameters ?? {},
    inputs: [{ name: 'IN', datatype: 'FP32', shape: [batch, ...dims], data: new Float32Array(batch * dims.reduce((a, b) => a * b, 1)) }],
  };
}

/** Lets promise callbacks run (results delivered, next batch dispatched). */
export const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
};
