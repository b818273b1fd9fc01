// The `js` backend: in-process JavaScript models, Herd's counterpart of Triton's Python backend.
// Each instance imports its own copy of the model file, calls initialize(args) once, execute(requests)
// per batch and finalize() on unload; see model-api.ts for what the model file sees.
import { HerdError } from '../../../core/errors.ts';
import type { Backend, BackendFactory, BackendLoadContext, ExecutionMarks, InferenceRequest, InferenceResult } from '../backend.ts';
import { createJsModelRequest } from './js-request.ts';
import { describeError, importJsModel, resolveModelFile, type ModelFile } from './load-js-model.ts';
import { modelHelpers, type JsModel, type JsModelArgs } from './model-api.ts';
import { convertJsResponse, convertModelError, createResponseRules, type ResponseRules } from './validate-js-response.ts';

export const jsBackend: BackendFactory = {
  name: 'js',
  load: loadJsModelInstance,
};

async function loadJsModelInstance(context: BackendLoadContext): Promise<Backend> {
  const { config } = context;
  const file = resolveModelFile(context.versionPath, {
    modelName: config.name,
    version: context.version,
    defaultModelFilename: config.default_model_filename,
  });
  const rules = createResponseRules(config, file.label);
  const model = await importJsModel(file);
  if (model.initialize) {
    try {
      await model.initialize(createArgs(context));
    } catch (err) {
      throw new HerdError('INTERNAL', `js model ${file.label}: initialize() failed: ${describeError(err)}`, { cause: err });
    }
  }
  return new JsModelInstance(model, file, rules, config.output.map((o) => o.name));
}

function createArgs(context: BackendLoadContext): JsModelArgs {
  return {
    model_config: structuredClone(context.config),
    model_name: context.config.name,
    model_version: String(context.version),
    model_repository: context.modelPath,
    model_instance_name: context.instanceName,
    model_instance_kind: context.instanceKind === 'KIND_GPU' ? 'GPU' : context.instanceKind === 'KIND_MODEL' ? 'MODEL' : 'CPU',
    model_instance_device_id: '0',
    herd: modelHelpers,
  };
}

class JsModelInstance implements Backend {
  private state: 'ready' | 'unloading' | 'unloaded' = 'ready';
  private readonly inflight = new Set<Promise<unknown>>();

  constructor(
    private readonly model: JsModel,
    private readonly file: ModelFile,
    private readonly rules: ResponseRules,
    private readonly outputNames: readonly string[],
  ) {}

  async execute(requests: InferenceRequest[], marks?: ExecutionMarks): Promise<InferenceResult[]> {
    if (this.state !== 'ready') throw new HerdError('UNAVAILABLE', `js model ${this.file.label}: instance is unloaded`);
    const run = this.run(requests, marks);
    this.inflight.add(run);
    try {
      return await run;
    } finally {
      this.inflight.delete(run);
    }
  }

  private async run(requests: InferenceRequest[], marks: ExecutionMarks | undefined): Promise<InferenceResult[]> {
    const modelRequests = requests.map((r) => createJsModelRequest(r, this.outputNames));
    if (marks) marks.inputEnd = process.hrtime.bigint();
    let returned: unknown;
    try {
      returned = await this.model.execute(modelRequests);
    } catch (err) {
      // A model bug fails this batch's requests, never the server or the instance.
      return requests.map(() => ({ ok: false, error: this.convertThrown(err) }));
    } finally {
      if (marks) marks.inferEnd = process.hrtime.bigint();
    }
    if (!Array.isArray(returned)) {
      throw new HerdError('INTERNAL', `js model ${this.file.label}: execute() returned ${typeof returned}, not an array of ${requests.length} responses`);
    }
    if (returned.length !== requests.length) {
      throw new HerdError('INTERNAL', `js model ${this.file.label}: execute() returned ${returned.length} responses for ${requests.length} requests`);
    }
    return returned.map((value: unknown, i) => {
      const request = requests[i];
      return convertJsResponse(value, this.rules, {
        requestedOutputs: request.requestedOutputs.length > 0 ? request.requestedOutputs : this.outputNames,
        batchSize: this.rules.batching ? request.inputs[0]?.shape[0] : undefined,
      });
    });
  }

  private convertThrown(err: unknown): HerdError {
    // Errors made with herd.createError carry the status the author chose; anything else (including
    // a createTensor complaint, which is INTERNAL) is a bug and gets the model file named.
    if (err instanceof HerdError && err.code !== 'INTERNAL') return convertModelError(err);
    return new HerdError('INTERNAL', `js model ${this.file.label}: execute() threw ${describeError(err)}`, { cause: err });
  }

  /** Waits for running batches, then calls finalize(); the instance is unloaded even if it throws. */
  async unload(): Promise<void> {
    if (this.state !== 'ready') return;
    this.state = 'unloading';
    await Promise.allSettled([...this.inflight]);
    this.state = 'unloaded';
    if (!this.model.finalize) return;
    try {
      await this.model.finalize();
    } catch (err) {
      throw new HerdError('INTERNAL', `js model ${this.file.label}: finalize() failed: ${describeError(err)}`, { cause: err });
    }
  }
}
