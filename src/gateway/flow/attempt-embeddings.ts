// One embeddings attempt on a routed deployment (chat-service.ts runs it through the same attempt loop as
// chat): the texts to the provider's embeddings API, one vector per text back, or an UpstreamError; then
// the vectors and usage as the flow answers them.
import type { AbortLink } from '../../core/abort-link.ts';
import type { Usage } from '../protocol/chat-types.ts';
import type { EmbeddingsRequest } from '../protocol/embeddings-request.ts';
import { UpstreamError } from '../protocol/upstream-error.ts';
import type { EmbedResult } from '../providers/provider.ts';
import type { TraceParent } from '../../tracing/trace-parent.ts';
import type { AttemptTarget } from '../router/run-attempts.ts';
import { shortenEmbedding } from '../wire/openai-embeddings/embedding-codec.ts';

export async function attemptEmbeddings(target: AttemptTarget, request: EmbeddingsRequest, signal: AbortLink, traceParent?: TraceParent): Promise<EmbedResult> {
  const embed = target.provider.embed?.bind(target.provider);
  if (embed === undefined) {
    throw new UpstreamError(`${target.provider.name}: this provider has no embeddings API`, { provider: target.provider.name, failure: 'not_found' });
  }
  const result = await embed(
    {
      inputs: request.inputs,
      upstreamModel: target.upstreamModel,
      ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
      timeoutMs: target.timeouts.timeoutMs,
      traceParent,
    },
    signal,
  );
  if (result.vectors.length !== request.inputs.length) {
    throw new UpstreamError(`${target.provider.name}: upstream returned ${result.vectors.length} embeddings for ${request.inputs.length} inputs`, {
      provider: target.provider.name,
      failure: 'malformed',
    });
  }
  return result;
}

/** The vectors as the client asked for them: cut to `dimensions` (and renormalised) when it set one. */
export function shortenEmbeddings(result: EmbedResult, request: EmbeddingsRequest): Float32Array[] {
  const { dimensions } = request;
  return dimensions === undefined ? result.vectors : result.vectors.map((v) => shortenEmbedding(v, dimensions));
}

/** Embeddings bill input only: every token is a prompt token. */
export function embeddingUsage(usage: EmbedResult['usage']): Usage {
  return {
    promptTokens: usage.promptTokens,
    cachedPromptTokens: 0,
    cacheWriteTokens: 0,
    completionTokens: 0,
    reasoningTokens: 0,
    estimated: usage.estimated === true,
    raw: undefined,
  };
}
