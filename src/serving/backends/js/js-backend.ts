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
  return new JsModelInstance(
    model,
    file,
    rules,
    config.output.map((o) => o.name),
  );
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

/** What a model's execute() did: returned a value, or threw (already converted to the client's error). */
type Returned = { threw: false; value: unknown } | { threw: true; error: HerdError };

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
    const returned = await this.track(requests, marks);
    if (returned.threw) return requests.map(() => ({ ok: false, error: returned.error }));
    if (!Array.isArray(returned.value)) {
      throw new HerdError('INTERNAL', `js model ${this.file.label}: execute() returned ${typeof returned.value}, not an array of ${requests.length} responses`);
    }
    if (returned.value.length !== requests.length) {
      throw new HerdError('INTERNAL', `js model ${this.file.label}: execute() returned ${returned.value.length} responses for ${requests.length} requests`);
    }
    const values: unknown[] = returned.value;
    return requests.map((request, i) => this.convert(values[i], request));
  }

  /** Decoupled models answer through each request's sender; a throw fails the requests not yet complete. */
  async executeDecoupled(requests: InferenceRequest[], marks?: ExecutionMarks): Promise<void> {
    const returned = await this.track(requests, marks);
    if (returned.threw) {
      for (const r of requests) if (r.responseSender && !r.responseSender.closed) r.responseSender.send({ ok: false, error: returned.error }, true);
      return;
    }
    // A decoupled model may still answer the ordinary way: each returned response is its request's last.
    if (Array.isArray(returned.value) && returned.value.length === requests.length) {
      const values: unknown[] = returned.value;
      requests.forEach((r, i) => {
        if (r.responseSender && !r.responseSender.closed) r.responseSender.send(this.convertSent(values[i], r), true);
      });
    }
  }

  private async track(requests: InferenceRequest[], marks: ExecutionMarks | undefined): Promise<Returned> {
    if (this.state !== 'ready') throw new HerdError('UNAVAILABLE', `js model ${this.file.label}: instance is unloaded`);
    const run = this.run(requests, marks);
    this.inflight.add(run);
    try {
      return await run;
    } finally {
      this.inflight.delete(run);
    }
  }

  private async run(requests: InferenceRequest[], marks: ExecutionMarks | undefined): Promise<Returned> {
    const modelRequests = requests.map((r) => createJsModelRequest(r, this.outputNames, this.convertSent));
    if (marks) marks.inputEnd = process.hrtime.bigint();
    try {
      return { threw: false, value: await this.model.execute(modelRequests) };
    } catch (err) {
      // A model bug fails this batch's requests, never the server or the instance.
      return { threw: true, error: this.convertThrown(err) };
    } finally {
      if (marks) marks.inferEnd = process.hrtime.bigint();
    }
  }

  private convert(value: unknown, request: InferenceRequest): InferenceResult {
    return convertJsResponse(value, this.rules, {
      requestedOutputs: request.requestedOutputs.length > 0 ? request.requestedOutputs : this.outputNames,
      batchSize: this.rules.batching ? request.inputs[0]?.shape[0] : undefined,
    });
  }

  /** A sent response that breaks the rules fails that request instead of throwing into the model. */
  private readonly convertSent = (value: unknown, request: InferenceRequest): InferenceResult => {
    try {
      return this.convert(value, request);
    } catch (err) {
      return { ok: false, error: err instanceof HerdError ? err : this.convertThrown(err) };
    }
  };

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
