// Which requests may read and write the cache (header x-herd-cache and cache.default_mode), and
// which answers may be stored — or served to a given request.
//
// Requests: by default only deterministic ones (temperature 0, n absent or 1) are cached; any
// other request only with `x-herd-cache: use`. `bypass` skips the read (the answer is still
// stored), `no-store` skips the write; tokens combine, comma-separated (`use, no-store`).
// An unknown token is an error, as an unknown body parameter is: a typo must not silently cache.
//
// Answers: only complete ones. Never cached: errors (they never reach the cache), finish_reason
// null (incomplete), `length` (truncated: often an empty answer whose budget went to reasoning,
// and what clients retry), `content_filter`, refusals (the provider's policy may change and must
// then apply at once), answers from a fallback model (a degraded answer would outlive the outage).
// Tool-call answers only when the request opted in with `use`: replaying a call can replay an action.
import type { CacheMode } from '../../config/cache-config-schema.ts';
import { HerdError } from '../../core/errors.ts';
import type { ChatRequest, ChatResponse } from '../protocol/chat-types.ts';

export const CACHE_HEADER = 'x-herd-cache';
export const CACHE_DIRECTIVES = ['use', 'bypass', 'no-store'] as const;
export type CacheDirective = (typeof CACHE_DIRECTIVES)[number];

/** Why the request is (or is not) eligible; bounded, for metric labels. */
export type CacheBasis = 'deterministic' | 'opted-in' | 'nondeterministic' | 'mode-off';

export interface CachePolicyDecision {
  read: boolean;
  write: boolean;
  basis: CacheBasis;
  /** For logs: the basis in words, with any bypass / no-store. */
  reason: string;
  /** The client sent `use`: tool-call answers may be stored and served. */
  optedIn: boolean;
}

export interface CachePolicyConfig {
  default_mode: CacheMode;
}

/** Lower-case header names, as Node's IncomingHttpHeaders has them. */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

export function evaluateCachePolicy(request: ChatRequest, headers: RequestHeaders, config: CachePolicyConfig): CachePolicyDecision {
  const directives = parseCacheDirectives(headers[CACHE_HEADER]);
  const optedIn = directives.has('use');
  let basis: CacheBasis;
  let why: string;
  if (optedIn) {
    basis = 'opted-in';
    why = `opted in (${CACHE_HEADER}: use)`;
  } else if (config.default_mode === 'off') {
    basis = 'mode-off';
    why = `cache.default_mode is off; send ${CACHE_HEADER}: use to cache`;
  } else {
    const nondeterminism = describeNondeterminism(request);
    basis = nondeterminism === undefined ? 'deterministic' : 'nondeterministic';
    why = nondeterminism === undefined ? 'deterministic (temperature 0, n 1)' : `not deterministic (${nondeterminism}); send ${CACHE_HEADER}: use to cache`;
  }
  const eligible = basis === 'deterministic' || basis === 'opted-in';
  const read = eligible && !directives.has('bypass');
  const write = eligible && !directives.has('no-store');
  const skipped = eligible ? [directives.has('bypass') ? 'bypass' : '', directives.has('no-store') ? 'no-store' : ''].filter(Boolean) : [];
  return { read, write, basis, optedIn, reason: skipped.length > 0 ? `${why}; ${skipped.join(', ')}` : why };
}

/** The header's tokens; repeated headers count as one comma-separated list. */
export function parseCacheDirectives(value: string | string[] | undefined): Set<CacheDirective> {
  const directives = new Set<CacheDirective>();
  if (value === undefined) return directives;
  for (const token of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const word = token.trim().toLowerCase();
    if (word === '') continue;
    if (!(CACHE_DIRECTIVES as readonly string[]).includes(word)) {
      throw new HerdError('INVALID_ARG', `Invalid ${CACHE_HEADER} header: '${token.trim()}' is not one of ${CACHE_DIRECTIVES.join(', ')} (comma-separated).`, {
        param: CACHE_HEADER,
      });
    }
    directives.add(word as CacheDirective);
  }
  return directives;
}

function describeNondeterminism(request: ChatRequest): string | undefined {
  if (request.temperature !== 0) return request.temperature === undefined ? 'no temperature (default 1)' : `temperature ${request.temperature}`;
  if (request.n !== undefined && request.n !== 1) return `n ${request.n}`;
  return undefined;
}

export interface AnswerVerdict {
  cacheable: boolean;
  reason: string;
}

export interface AnswerContext {
  /** The canonical model of the request (the one in the key). */
  model: string;
  /** From the request's CachePolicyDecision. */
  optedIn: boolean;
}

/**
 * Whether an answer may be stored for this request — and, on a lookup, whether a stored one may be
 * served to it (an entry written under `use` with tool calls is not served to a request without it).
 */
export function evaluateCachedAnswer(response: ChatResponse, context: AnswerContext): AnswerVerdict {
  const no = (reason: string): AnswerVerdict => ({ cacheable: false, reason });
  if (response.model !== context.model) return no(`answered by fallback model ${response.model}, not ${context.model}`);
  if (response.choices.length === 0) return no('no choices');
  for (const choice of response.choices) {
    const message = choice.message;
    switch (choice.finish_reason) {
      case null:
        return no('incomplete (no finish_reason)');
      case 'length':
        return no('truncated (finish_reason length)');
      case 'content_filter':
        return no('content filtered');
      default:
        break;
    }
    if (message.refusal !== undefined && message.refusal !== null) return no('a refusal');
    const calls = (message.tool_calls?.length ?? 0) > 0 || choice.finish_reason === 'tool_calls' || choice.finish_reason === 'function_call';
    if (calls && !context.optedIn) return no(`tool calls are cached only with ${CACHE_HEADER}: use`);
  }
  return { cacheable: true, reason: 'complete answer' };
}
