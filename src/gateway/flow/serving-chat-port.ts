// The gateway side of core/chat-port.ts: a serving-side `llm` model's call becomes an ordinary request
// through ChatGateway (routing, fallbacks, retries, breakers, cache, admission, the key's limits and
// budget, the ledger), run as the principal serving-principals.ts decided at admission.
import { extractTraceParent } from '../../tracing/trace-parent.ts';
import { canonicalChunk } from '../protocol/raw-sse.ts';
import { LightAbortController, type AbortLink } from '../../core/abort-link.ts';
import type { ChatPort, ChatPortCost, ChatPortEvent, ChatPortRequest, ChatPortResult } from '../../core/chat-port.ts';
import { HerdError } from '../../core/errors.ts';
import type { Cost } from '../billing/price-usage.ts';
import type { ChatGateway } from './chat-gateway.ts';
import type { GatewayAnswer } from './flight.ts';
import { createServingPrincipals, type ServingPrincipalsOptions } from './serving-principals.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import { PRIORITY_HEADER } from '../limits/priority.ts';

export interface ServingChatPortOptions extends ServingPrincipalsOptions {
  flow: ChatGateway;
}

export function createServingChatPort(options: ServingChatPortOptions): ChatPort {
  const principals = createServingPrincipals(options);
  const call = (request: ChatPortRequest, stream: boolean) =>
    options.flow.handle(convertPortRequest(request, stream), {
      key: principals.principal(request),
      headers: { [PRIORITY_HEADER]: request.priority },
      signal: linkSignal(request.signal),
      origin: request.origin,
      traceParent: extractTraceParent(request.traceparent, request.traceState),
    });

  return {
    admit: (credentials, spending) => principals.admit(credentials, spending),
    async complete(request) {
      const answer = await call(request, false);
      if (answer.kind !== 'completion') throw new HerdError('INTERNAL', 'the gateway answered a completion request with a stream');
      const choice = answer.response.choices[0];
      const usage = answer.meta.usage;
      const result: ChatPortResult = {
        text: typeof choice?.message.content === 'string' ? choice.message.content : '',
        finishReason: choice?.finish_reason ?? 'stop',
        model: answer.meta.model,
        provider: answer.meta.provider,
        usage: { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens },
      };
      const priced = costOf(answer.cost, answer.cache === 'hit');
      return priced ? { ...result, cost: priced } : result;
    },

    async *stream(request): AsyncIterable<ChatPortEvent> {
      const answer = await call(request, true);
      if (answer.kind !== 'stream') throw new HerdError('INTERNAL', 'the gateway answered a stream request with a completion');
      yield* relayStream(answer);
    },
  };
}

/** A gateway stream as the port's events: each text delta, then the result with its price. */
async function* relayStream(answer: Extract<GatewayAnswer, { kind: 'stream' }>): AsyncIterable<ChatPortEvent> {
  const { stream } = answer;
  let text = '';
  let finishReason: string | null = null;
  let finished = false;
  try {
    for await (const piece of stream.chunks) {
      const choice = canonicalChunk(piece).choices[0];
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      const delta = choice?.delta.content;
      if (typeof delta === 'string' && delta !== '') {
        text += delta;
        yield { type: 'delta', text: delta };
      }
    }
    finished = true;
  } finally {
    // A consumer that stops early (the Triton client went away) stops the upstream too.
    if (!finished) stream.cancel();
  }
  const result = await stream.result;
  if (result.outcome === 'failed') throw result.error ?? new HerdError('UPSTREAM_ERROR', 'the upstream stream failed');
  const { usage } = result;
  const priced = costOf(await answer.cost, false);
  const done: ChatPortResult = {
    text,
    finishReason: finishReason ?? result.finishReason ?? 'stop',
    model: stream.meta.model,
    provider: stream.meta.provider,
    usage: { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens },
    ...(priced ? { cost: priced } : {}),
  };
  yield { type: 'done', result: done };
}

/** The port's request as the gateway's canonical chat request. */
function convertPortRequest(request: ChatPortRequest, stream: boolean): ChatRequest {
  return {
    model: request.model,
    messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
    ...(request.maxTokens !== undefined ? { max_tokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { top_p: request.topP } : {}),
    ...(request.stop !== undefined && request.stop.length > 0 ? { stop: request.stop } : {}),
    ...(request.seed !== undefined ? { seed: request.seed } : {}),
    ...(request.presencePenalty !== undefined ? { presence_penalty: request.presencePenalty } : {}),
    ...(request.frequencyPenalty !== undefined ? { frequency_penalty: request.frequencyPenalty } : {}),
    ...(stream ? { stream: true } : {}),
  };
}

/**
 * The `cost` output from the price the gateway's settlement gave the ledger row, so the call is priced
 * once; a cache hit cost nothing (its row records what it saved).
 */
function costOf(cost: Cost | undefined, cacheHit: boolean): ChatPortCost | undefined {
  if (cost === undefined) return undefined;
  return { micros: cacheHit ? 0 : cost.costMicros, currency: cost.currency };
}

/** The gateway reads signals as AbortLinks; a missing one is a signal that never fires. */
function linkSignal(signal: AbortLink | undefined): AbortLink {
  if (signal) return signal;
  return new LightAbortController().signal;
}
