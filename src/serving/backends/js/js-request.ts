// Wraps a scheduler InferenceRequest in the request object a JS model's execute() receives.
// Input tensors are handed over as they are (no copy); the model must treat them as read-only.
import type { Tensor } from '../../../core/tensor.ts';
import type { InferenceRequest, InferenceResult } from '../backend.ts';
import type { JsModelRequest, JsModelResponse, JsResponseSender } from './model-api.ts';

/** Checks one response a model returned or sent, as the backend does for execute()'s results. */
export type ConvertJsResponse = (value: unknown, request: InferenceRequest) => InferenceResult;

export function createJsModelRequest(request: InferenceRequest, configOutputNames: readonly string[], convert: ConvertJsResponse): JsModelRequest {
  const byName = new Map<string, Tensor>(request.inputs.map((t) => [t.name, t]));
  const requested = request.requestedOutputs.length > 0 ? request.requestedOutputs : configOutputNames;
  const base = {
    id: request.id,
    parameters: Object.freeze({ ...request.parameters }),
    input: (name: string) => byName.get(name),
    inputs: () => [...request.inputs],
    requestedOutputNames: () => [...requested],
  };
  const sender = request.responseSender;
  if (!sender) return Object.freeze(base);
  const modelSender: JsResponseSender = Object.freeze({
    send: (response: JsModelResponse, options?: { final?: boolean }) => sender.send(convert(response, request), options?.final === true),
    close: () => sender.close(),
    isCancelled: () => sender.signal.aborted,
  });
  return Object.freeze({ ...base, responseSender: () => modelSender });
}
