// Wraps a scheduler InferenceRequest in the request object a JS model's execute() receives.
// Input tensors are handed over as they are (no copy); the model must treat them as read-only.
import type { Tensor } from '../../../core/tensor.ts';
import type { InferenceRequest } from '../backend.ts';
import type { JsModelRequest } from './model-api.ts';

export function createJsModelRequest(request: InferenceRequest, configOutputNames: readonly string[]): JsModelRequest {
  const byName = new Map<string, Tensor>(request.inputs.map((t) => [t.name, t]));
  const requested = request.requestedOutputs.length > 0 ? request.requestedOutputs : configOutputNames;
  return Object.freeze({
    id: request.id,
    parameters: Object.freeze({ ...request.parameters }),
    input: (name: string) => byName.get(name),
    inputs: () => [...request.inputs],
    requestedOutputNames: () => [...requested],
  });
}
