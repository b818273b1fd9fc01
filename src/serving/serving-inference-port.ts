// The serving side's implementation of core's InferencePort: the gateway's `type: triton` deployments
// and local embedding models call the InferenceService in process, with the same scheduling, batching,
// statistics and errors as a KServe client gets.
import { randomUUID } from 'node:crypto';
import type { InferencePort, InferencePortAnswer, InferencePortEvent, InferencePortModel, InferencePortRequest } from '../core/inference-port.ts';
import type { InferAnswer, InferCall } from './infer-call.ts';
import type { InferenceService } from './inference-service.ts';

export function createServingInferencePort(service: InferenceService): InferencePort {
  const toCall = (request: InferencePortRequest): InferCall => ({
    modelName: request.model,
    ...(request.version !== undefined ? { version: request.version } : {}),
    id: request.id ?? randomUUID(),
    parameters: request.parameters ?? {},
    inputs: request.inputs,
    outputs: (request.outputs ?? []).map((name) => ({ name })),
  });
  const toAnswer = (answer: InferAnswer): InferencePortAnswer => ({
    model: answer.modelName,
    version: answer.modelVersion,
    outputs: answer.outputs,
    ...(answer.parameters ? { parameters: answer.parameters } : {}),
  });
  return {
    async infer(request) {
      return toAnswer(await service.infer(toCall(request)));
    },
    async *stream(request, signal): AsyncGenerator<InferencePortEvent> {
      for await (const event of service.streamInfer(toCall(request), signal)) {
        yield { ...(event.answer ? { answer: toAnswer(event.answer) } : {}), ...(event.error ? { error: event.error } : {}), final: event.final };
      }
    },
    describe(model, version): InferencePortModel | undefined {
      if (!service.isModelReady(model, version)) return undefined;
      const meta = service.metadata(model, version);
      const config = service.config(model, version);
      return {
        name: meta.name,
        versions: meta.versions.map(Number),
        inputs: meta.inputs,
        outputs: meta.outputs,
        maxBatchSize: config.max_batch_size,
        decoupled: config.model_transaction_policy?.decoupled === true,
        parameters: Object.fromEntries(Object.entries(config.parameters).map(([key, p]) => [key, p.string_value])),
      };
    },
  };
}
