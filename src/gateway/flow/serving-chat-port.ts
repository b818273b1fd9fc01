// The gateway side of core/chat-port.ts: a serving-side `llm` model's call becomes an ordinary request
// through ChatGateway (routing, fallbacks, retries, breakers, cache, admission, the key's limits and
// budget, the ledger), run as the caller's own key, else as a principal the operator named (the model's
// gateway_key_env, serving.identity), else refused: who pays is decided once, in admit().
import { canonicalChunk } from '../protocol/raw-sse.ts';
import { LightAbortController, type AbortLink } from '../../core/abort-link.ts';
import type { ChatCaller, ChatCredentials, ChatPort, ChatPortCost, ChatPortEvent, ChatPortRequest, ChatPortResult, ModelSpending } from '../../core/chat-port.ts';
import type { ServingIdentity } from '../../config/herd-config-schema.ts';
import { HerdError } from '../../core/errors.ts';
import type { Cost } from '../billing/price-usage.ts';
import type { ChatGateway } from './chat-gateway.ts';
import type { ChatRequest } from '../protocol/chat-types.ts';
import { type Authenticator, isLoopbackAddress, parseBearerToken } from '../keys/authenticator.ts';
import { parseBudgetAmount } from '../keys/budget-amount.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import { PRIORITY_HEADER } from '../limits/priority.ts';

export interface ServingChatPortOptions {
  flow: ChatGateway;
  authenticator: Authenticator;
  /**
   * herd.yaml `serving.identity` when the operator set it: the principal keyless calls pay as. Undefined:
   * nobody pays for a keyless call, except in open mode from this machine.
   */
  identity: ServingIdentity | undefined;
  env: NodeJS.ProcessEnv;
}

/** The principal keyless calls run as in open mode (no keys exist, so nothing to limit); the ledger's name for it. */
const OPEN_MODE_NAME = 'triton-serving';

export const KSERVE_MISSING_KEY_MESSAGE =
  "This model calls a paid upstream, so a request needs a gateway key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>' " +
  "(HTTP headers or gRPC metadata; tritonclient: headers={'Authorization': 'Bearer <key>'}).";
const KSERVE_NOT_LOCAL_MESSAGE =
  'This model calls a paid upstream and this Herd gateway has no API keys configured, so it only runs it for requests from the machine it runs on. Ask its administrator for a key.';

export function createServingChatPort(options: ServingChatPortOptions): ChatPort {
  const { authenticator } = options;
  // Which principal each admitted caller stands for; a caller this port did not issue stands for nobody.
  const issued = new WeakMap<ChatCaller, KeyInfo | typeof OWN_KEY>();
  const callers = new WeakMap<KeyInfo, ChatCaller>();
  const issue = (key: KeyInfo): ChatCaller => {
    let caller = callers.get(key);
    if (caller === undefined) {
      caller = Object.freeze({ name: key.name });
      callers.set(key, caller);
      issued.set(caller, key);
    }
    return caller;
  };
  const ownKeyCaller: ChatCaller = Object.freeze({ name: "the model's gateway_key_env" });
  issued.set(ownKeyCaller, OWN_KEY);
  const identity = options.identity === undefined ? undefined : createIdentityKey(options.identity);
  const openKey: KeyInfo = Object.freeze({ id: `serving:${OPEN_MODE_NAME}`, name: OPEN_MODE_NAME, prefix: '', allowedModels: '*', role: 'client' });

  const modelKey = (keyEnv: string): KeyInfo => {
    const secret = options.env[keyEnv];
    if (!secret) throw new HerdError('UNAUTHENTICATED', `the gateway key variable ${keyEnv} named by model parameter gateway_key_env is not set`);
    const result = authenticator.authenticate(`Bearer ${secret}`);
    if (result instanceof HerdError) throw result;
    return result.key;
  };

  const principal = (request: ChatPortRequest): KeyInfo => {
    if (request.caller !== undefined) {
      const admitted = issued.get(request.caller);
      if (admitted === undefined) throw new HerdError('INTERNAL', 'an llm call carried a caller the gateway did not admit');
      if (admitted !== OWN_KEY) return admitted;
      if (request.keyEnv === undefined) throw new HerdError('INTERNAL', 'a keyless caller was admitted for a model that names no gateway_key_env');
      return modelKey(request.keyEnv);
    }
    // In process (a Python model's BLS call, a warmup, a triton deployment): no caller key reached it.
    if (request.keyEnv !== undefined) return modelKey(request.keyEnv);
    if (identity !== undefined) return identity;
    if (authenticator.isOpen()) return openKey;
    throw new HerdError(
      'UNAUTHENTICATED',
      'no caller key reached this call (made in process: a BLS call, a warmup or a triton deployment); name a gateway_key_env parameter in the model config or serving.identity in herd.yaml',
    );
  };

  const call = (request: ChatPortRequest, stream: boolean) => {
    const key = principal(request);
    const chat: ChatRequest = {
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
    return options.flow.handle(chat, { key, headers: { [PRIORITY_HEADER]: request.priority }, signal: linkSignal(request.signal), origin: request.origin });
  };

  return {
    admit(credentials: ChatCredentials, spending: ModelSpending): ChatCaller | HerdError {
      // While open (no keys exist) a sent key means nothing, as on /v1: the call is keyless.
      const open = authenticator.isOpen();
      if (credentials.apiKey !== undefined && !open) {
        // As /v1 does: the same key store, masking and wrong-key lockout.
        const client =
          credentials.remoteAddress === undefined ? undefined : { address: credentials.remoteAddress, forwardedByUntrustedPeer: credentials.forwardedByUntrustedPeer === true };
        const result = authenticator.authenticate(`Bearer ${credentials.apiKey}`, client);
        return result instanceof HerdError ? result : issue(result.key);
      }
      if (spending.ownKey) return ownKeyCaller;
      if (identity !== undefined) return issue(identity);
      if (!open) return new HerdError('UNAUTHENTICATED', KSERVE_MISSING_KEY_MESSAGE);
      const local = credentials.remoteAddress === undefined || isLoopbackAddress(credentials.remoteAddress);
      if (local && credentials.forwardedByUntrustedPeer !== true) return issue(openKey);
      return new HerdError('UNAUTHENTICATED', KSERVE_NOT_LOCAL_MESSAGE);
    },

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
    },
  };
}

/** Marks a caller admitted without a key because the model names its own (gateway_key_env). */
const OWN_KEY = Symbol('own-key');

/** herd.yaml `serving.identity` as a principal like any key: its allowed models, limits and budget. */
function createIdentityKey(identity: ServingIdentity): KeyInfo {
  const key: KeyInfo = { id: `serving:${identity.name}`, name: identity.name, prefix: '', allowedModels: identity.models, role: 'client' };
  if (identity.rpm !== undefined) key.rpm = identity.rpm;
  if (identity.tpm !== undefined) key.tpm = identity.tpm;
  if (identity.max_concurrency !== undefined) key.maxConcurrency = identity.max_concurrency;
  if (identity.budget_day !== undefined) key.budgetDayMicros = parseBudgetAmount(identity.budget_day, 'serving.identity.budget_day');
  if (identity.budget_month !== undefined) key.budgetMonthMicros = parseBudgetAmount(identity.budget_month, 'serving.identity.budget_month');
  return Object.freeze(key);
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
function linkSignal(signal: AbortSignal | undefined): AbortLink {
  if (signal) return signal;
  return new LightAbortController().signal;
}

/** The key a KServe caller sent: `Authorization: Bearer <key>` first, else `x-api-key` (HTTP headers or gRPC metadata). */
export function readCallerKey(authorization: string | undefined, apiKey: string | undefined): string | undefined {
  if (authorization !== undefined) {
    const token = parseBearerToken(authorization);
    if (token !== undefined) return token;
  }
  const trimmed = apiKey?.trim();
  return trimmed ? trimmed : undefined;
}
