// The triton provider's client for this Herd's own repository: core's InferencePort in process (no
// HTTP hop), with the attempt's timeout and the caller's abort applied around it.
import type { InferencePort, InferencePortAnswer, InferencePortModel, InferencePortRequest } from '../../../core/inference-port.ts';
import { AttemptTimer } from '../attempt-timer.ts';
import { UpstreamError } from '../../protocol/upstream-error.ts';
import { mapTritonError } from './map-triton-error.ts';
import type { TritonCallOptions, TritonModelClient } from './triton-model-client.ts';

export function createLocalTritonClient(provider: string, port: InferencePort): TritonModelClient {
  /** Rejects when the timer fires: with the caller's reason, or a timeout UpstreamError. */
  const whenAborted = (timer: AttemptTimer, options: TritonCallOptions, model: string): Promise<never> => {
    const promise = new Promise<never>((_, reject) => {
      const fire = () => reject(options.signal.aborted ? options.signal.reason : timeoutError(provider, model, timer.lastMs));
      if (timer.signal.aborted) fire();
      else timer.signal.addEventListener('abort', fire, { once: true });
    });
    promise.catch(() => undefined);
    return promise;
  };

  return {
    async describe(model, version) {
      return port.describe(model, version);
    },

    async infer(request, _model, options) {
      const timer = new AttemptTimer(options.signal, options.timeoutMs);
      try {
        // A non-decoupled request cannot be withdrawn once scheduled: on abort or timeout it runs on unread.
        return await Promise.race([port.infer(request), whenAborted(timer, options, request.model)]);
      } catch (err) {
        if (options.signal.aborted && err === options.signal.reason) throw err;
        throw mapTritonError(provider, request.model, err);
      } finally {
        timer.dispose();
      }
    },

    async *stream(request: InferencePortRequest, _model: InferencePortModel, options: TritonCallOptions): AsyncGenerator<InferencePortAnswer> {
      const timer = new AttemptTimer(options.signal, options.timeoutMs);
      // The port takes a real AbortSignal; it cancels the decoupled request (the model's sender sees it).
      const controller = new AbortController();
      const cancel = () => controller.abort(timer.signal.reason);
      timer.signal.addEventListener('abort', cancel, { once: true });
      const aborted = whenAborted(timer, options, request.model);
      const events = port.stream(request, controller.signal)[Symbol.asyncIterator]();
      let finished = false;
      let seen = false;
      try {
        for (;;) {
          if (seen) timer.arm(options.idleTimeoutMs ?? options.timeoutMs);
          let next: IteratorResult<Awaited<ReturnType<typeof events.next>>['value']>;
          try {
            next = await Promise.race([events.next(), aborted]);
          } catch (err) {
            if (options.signal.aborted && err === options.signal.reason) throw err;
            throw mapTritonError(provider, request.model, err);
          }
          timer.disarm();
          if (next.done) {
            finished = true;
            return;
          }
          seen = true;
          const event = next.value;
          if (event.error) {
            finished = event.final;
            throw mapTritonError(provider, request.model, event.error);
          }
          if (event.answer) yield event.answer;
          if (event.final) {
            finished = true;
            return;
          }
        }
      } finally {
        timer.signal.removeEventListener('abort', cancel);
        timer.dispose();
        if (!finished) {
          controller.abort(new UpstreamError(`${provider}: the caller stopped reading`, { provider, failure: 'interrupted' }));
          void events.return?.(undefined).catch(() => undefined);
        }
      }
    },

    async close() {},
  };
}

function timeoutError(provider: string, model: string, ms: number): UpstreamError {
  return new UpstreamError(`${provider}: model '${model}' did not answer within ${ms} ms`, { provider, failure: 'timeout' });
}
