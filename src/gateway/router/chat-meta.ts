// What a finished or started gateway operation reports besides its body: the route taken, the attempts,
// the timings and the usage; the transports turn it into x-herd-* headers, billing into ledger rows.
import type { TierName } from '../../config/gateway-config-schema.ts';
import type { Usage } from '../protocol/chat-types.ts';
import type { ProviderWarning } from '../providers/provider.ts';
import type { AttemptRecord } from './attempt-record.ts';
import type { RouteKind } from './resolve-route.ts';

/** What the transport needs besides the body: the x-herd-* headers and the attempt trail. */
export interface ChatMeta {
  /** The `model` the client sent. */
  requestedModel: string;
  route: RouteKind;
  /** The herd.yaml rule the requested model matched (x-herd-route, the ledger's route_rule): `model:x`, `alias:x`, `tier:x`, `auto`, `pattern:glob`. */
  routeRule: string;
  tier?: TierName;
  /** Public name of the model that answered (x-herd-model; also the body's `model`). */
  model: string;
  /** x-herd-provider. */
  provider: string;
  upstreamModel: string;
  /** Every upstream attempt, failed ones included (x-herd-attempts = attempts.length). */
  attempts: AttemptRecord[];
  /** Time waiting on upstreams (failed attempts included); for a stream, until its first chunk. */
  upstreamMs: number;
  /** Time sleeping between retries (Retry-After, backoff) and queued for admission. */
  waitedMs: number;
  /** The part of waitedMs queued for admission (priority queue, provider limits). */
  queuedMs?: number;
  /** Herd's own time inside the service so far: elapsed − upstreamMs − waitedMs. */
  overheadMs: number;
  /** Prompt tokens Herd counted for routing, when routing needed them. */
  estimatedPromptTokens?: number;
  warnings: ProviderWarning[];
  /** The budget capped a request without max_tokens to this many (x-herd-max-tokens-capped). */
  maxTokensCapped?: number;
}

export interface CompletionMeta extends ChatMeta {
  /** Normalised usage for billing (the body carries OpenAI's shape of it). */
  usage: Usage;
  rawFinishReason: string | null;
}
