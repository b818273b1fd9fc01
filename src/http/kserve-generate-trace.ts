// Traces of the generate extension (POST /v2/models/{m}/generate, generate_stream) as Triton's HandleGenerate
// takes them: sampled as infers are, the frontend's stamps on InferRequest, the span ending when the answer's last chunk went out.
import type { ServerResponse } from 'node:http';
import { HerdError } from '../core/errors.ts';
import type { InferAnswer } from '../serving/infer-call.ts';
import type { InferTrace, ServingTracing } from '../serving/infer-trace.ts';
import type { LoadedModel } from '../serving/repository/loaded-model.ts';
import type { InferStreamEvent } from '../serving/response-stream.ts';
import { startHttpInferTrace } from './kserve-infer-exchange.ts';

type Events = AsyncIterable<InferStreamEvent<InferAnswer>>;

/**
 * The trace of a generate request when its model's trace setting samples it (a traceparent makes it always traced,
 * in OpenTelemetry mode): HTTP_RECV_START when it began arriving (`receivedAt`, else now), HTTP_RECV_END now.
 */
export function startHttpGenerateTrace(
  tracing: ServingTracing | undefined,
  model: LoadedModel,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  receivedAt?: number,
): InferTrace | undefined {
  const trace = startHttpInferTrace(tracing, model, headers, receivedAt);
  trace?.capture('HTTP_RECV_END');
  return trace;
}

/**
 * A traced request's events, passed through: INFER_RESPONSE_COMPLETE at each (Triton's generate callback stamps
 * every response), HTTP_SEND_START as the last one is written (so trace_summary.py's send time is the answer's last
 * write, as for an infer), and once the response has closed, HTTP_SEND_END and the trace's end: a stream's
 * InferRequest ends with its last chunk. Untraced: `events` itself.
 */
export function traceGenerateEvents(trace: InferTrace | undefined, events: Events, res: ServerResponse): Events {
  if (trace === undefined) return events;
  const state = { sending: false };
  res.once('close', () => {
    if (state.sending) trace.capture('HTTP_SEND_END');
    trace.end(res.writableFinished ? undefined : new HerdError('UNAVAILABLE', 'client closed the connection'));
  });
  return relay(trace, events, state);
}

async function* relay(trace: InferTrace, events: Events, state: { sending: boolean }): Events {
  try {
    for await (const event of events) {
      trace.responseComplete();
      if (event.error) trace.fail(event.error);
      if (event.final) sendStart(trace, state);
      yield event;
    }
  } finally {
    // No final event (the stream failed): the error answer is written next.
    sendStart(trace, state);
  }
}

function sendStart(trace: InferTrace, state: { sending: boolean }): void {
  if (state.sending) return;
  state.sending = true;
  trace.capture('HTTP_SEND_START');
}
