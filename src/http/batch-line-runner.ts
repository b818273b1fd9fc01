// A batch line run realtime through the same codecs and flow as its endpoint's HTTP route: decoded by the
// endpoint's ingress codec, handed to the gateway at BATCH priority under the owner's key and the line's request
// id, and answered as the route would have answered (the upstream's own bytes or the codec's encoding; errors in
// the dialect's shape). The worker (gateway/batch/) gets it as a RunLineRealtime.
import { HerdError, toHerdError } from '../core/errors.ts';
import type { RunLineRealtime } from '../gateway/batch/batch-worker-ports.ts';
import type { LineResult } from '../gateway/batch/batch-store.ts';
import type { ChatGateway, GatewayCaller } from '../gateway/flow/chat-gateway.ts';
import type { EmbeddingsGateway } from '../gateway/flow/embeddings-gateway.ts';
import { messagesCodec } from '../gateway/ingress/anthropic-messages/messages-codec.ts';
import { chatCodec } from '../gateway/ingress/openai-chat/chat-codec.ts';
import { completionsCodec } from '../gateway/ingress/openai-completions/completions-codec.ts';
import { convertEmbeddingsResponse } from '../gateway/ingress/openai-embeddings/convert-embeddings-response.ts';
import { validateEmbeddingsRequest } from '../gateway/ingress/openai-embeddings/validate-embeddings-request.ts';
import { responsesCodec } from '../gateway/ingress/openai-responses/responses-codec.ts';
import { PRIORITY_HEADER } from '../gateway/limits/priority.ts';
import { isJsonObject, type JsonObject } from '../gateway/protocol/check-json-value.ts';
import type { IngressCodec } from '../gateway/protocol/ingress-codec.ts';
import { readUpstreamBytes } from '../gateway/protocol/upstream-bytes.ts';
import { mapErrorToAnthropic } from './map-anthropic-error.ts';
import { mapErrorToOpenAI } from './map-openai-error.ts';

export interface BatchLineRunnerDeps {
  gateway: ChatGateway;
  embeddings: EmbeddingsGateway | undefined;
}

/** A batch runs every line to its end: a stream asked for in a line is answered whole. */
const BATCH_HEADERS = { [PRIORITY_HEADER]: 'batch' };

type Caller = Omit<GatewayCaller, 'dialect' | 'passThrough' | 'body'>;
type RunEndpoint = (deps: BatchLineRunnerDeps, caller: Caller, body: JsonObject) => Promise<LineResult>;

const RUN_BY_ENDPOINT: Readonly<Record<string, RunEndpoint>> = {
  '/v1/chat/completions': (deps, caller, body) => runChat(chatCodec, deps, caller, body),
  '/v1/responses': (deps, caller, body) => runChat(responsesCodec, deps, caller, body),
  '/v1/completions': (deps, caller, body) => runChat(completionsCodec, deps, caller, body),
  '/v1/messages': (deps, caller, body) => runChat(messagesCodec, deps, caller, body),
  '/v1/embeddings': runEmbeddings,
};

export function createBatchLineRunner(deps: BatchLineRunnerDeps): RunLineRealtime {
  return async ({ batch, line, key, body, signal }) => {
    try {
      const run = RUN_BY_ENDPOINT[batch.endpoint];
      if (run === undefined) throw new HerdError('INVALID_ARG', `batches do not serve ${batch.endpoint.slice(0, 64)}`);
      return await run(deps, { key, headers: BATCH_HEADERS, signal, requestId: line.requestId, origin: `batch:${batch.id}`, batch: { id: batch.id } }, body);
    } catch (err) {
      return { outcome: 'errored', ...encodeLineError(batch.endpoint, toHerdError(err)) };
    }
  };
}

/** A line's error answer as its endpoint's realtime route answers errors (Anthropic's shape for Message Batches, else OpenAI's). */
export function encodeLineError(endpoint: string, error: HerdError): { statusCode: number; body: JsonObject } {
  const mapped = endpoint === '/v1/messages' ? mapErrorToAnthropic(error) : mapErrorToOpenAI(error);
  return { statusCode: mapped.status, body: mapped.body as unknown as JsonObject };
}

async function runChat<D, F>(codec: IngressCodec<D, F>, deps: BatchLineRunnerDeps, caller: Caller, body: JsonObject): Promise<LineResult> {
  const whole = { ...body, stream: false };
  const { request, decoded } = codec.decode(whole, {});
  const passThrough = codec.passThrough;
  const answer = await deps.gateway.handle(request, { ...caller, dialect: codec.dialect, passThrough, ...(passThrough ? { body: whole } : {}) });
  if (answer.kind !== 'completion') {
    answer.stream.cancel();
    throw new HerdError('INTERNAL', 'a batch line was answered as a stream');
  }
  const text =
    readUpstreamBytes(answer.response, codec.dialect) ??
    JSON.stringify(codec.encodeResponse(answer.response, answer.meta.usage, decoded, { rawFinishReason: answer.meta.rawFinishReason }));
  return succeeded(JSON.parse(text) as unknown);
}

async function runEmbeddings(deps: BatchLineRunnerDeps, caller: Caller, body: JsonObject): Promise<LineResult> {
  if (deps.embeddings === undefined) throw new HerdError('NOT_FOUND', 'embeddings are not configured on this server');
  const request = validateEmbeddingsRequest(body);
  const answer = await deps.embeddings.handle(request, { ...caller, dialect: 'openai-embeddings' });
  return succeeded(convertEmbeddingsResponse(answer, request.encodingFormat));
}

function succeeded(body: unknown): LineResult {
  return { outcome: 'succeeded', statusCode: 200, body: isJsonObject(body) ? body : { value: body as JsonObject } };
}
