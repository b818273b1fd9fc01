// Wraps a scheduler InferenceRequest in the request object a JS model's execute() receives.
// Input tensors are handed over as they are (no copy); the model must treat them as read-only.
import type { AbortLink } from '../../../core/abort-link.ts';
import type { Tensor } from '../../../core/tensor.ts';
import type { InferenceRequest, InferenceResult } from '../backend.ts';
import type { JsModelRequest, JsModelResponse, JsResponseSender } from './model-api.ts';

/** Checks one response a model returned or sent, as the backend does for execute()'s results. */
export type ConvertJsResponse = (value: unknown, request: InferenceRequest) => InferenceResult;

/** The signal of a request nobody can cancel (an in-process call, warmup): it never fires. */
const NEVER = new AbortController().signal;

export function createJsModelRequest(request: InferenceRequest, configOutputNames: readonly string[], convert: ConvertJsResponse): JsModelRequest {
  const byName = new Map<string, Tensor>(request.inputs.map((t) => [t.name, t]));
  const requested = request.requestedOutputs.length > 0 ? request.requestedOutputs : configOutputNames;
  const sender = request.responseSender;
  let signal: AbortSignal | undefined = sender?.signal;
  const base = {
    id: request.id,
    parameters: Object.freeze({ ...request.parameters }),
    input: (name: string) => byName.get(name),
    inputs: () => [...request.inputs],
    requestedOutputNames: () => [...requested],
    // Made on first read: most models never look, and an AbortSignal is dear to create and to listen on.
    get signal(): AbortSignal {
      signal ??= toAbortSignal(request.signal);
      return signal;
    },
  };
  if (!sender) return Object.freeze(base);
  const modelSender: JsResponseSender = Object.freeze({
    send: (response: JsModelResponse, options?: { final?: boolean }) => sender.send(convert(response, request), options?.final === true),
    close: () => sender.close(),
    isCancelled: () => sender.signal.aborted,
  });
  return Object.freeze(Object.defineProperty(base, 'responseSender', { value: () => modelSender, enumerable: true }) as JsModelRequest);
}

/** The scheduler's signal (a light one, from a transport) as the standard AbortSignal a model file expects. */
function toAbortSignal(link: AbortLink | undefined): AbortSignal {
  if (link === undefined) return NEVER;
  if (link instanceof AbortSignal) return link;
  const controller = new AbortController();
  if (link.aborted) controller.abort(link.reason);
  else link.addEventListener('abort', () => controller.abort(link.reason), { once: true });
  return controller.signal;
}
