// Who pays for a serving-side `llm` call: the caller's own key, else a principal the operator named (the
// model's gateway_key_env, serving.identity), else refused; decided once at admission, resolved per call.
import type { ChatCaller, ChatCredentials, ChatPortRequest, ModelSpending } from '../../core/chat-port.ts';
import type { ServingIdentity } from '../../config/herd-config-schema.ts';
import { HerdError } from '../../core/errors.ts';
import { type Authenticator, isLoopbackAddress, parseBearerToken } from '../keys/authenticator.ts';
import { parseBudgetAmount } from '../keys/budget-amount.ts';
import type { BudgetRule, KeyInfo } from '../keys/key-store.ts';
import { createSyntheticKey } from '../keys/synthetic-key.ts';

export interface ServingPrincipalsOptions {
  authenticator: Authenticator;
  /**
   * herd.yaml `serving.identity` when the operator set it: the principal keyless calls pay as. Undefined:
   * nobody pays for a keyless call, except in open mode from this machine.
   */
  identity: ServingIdentity | undefined;
  env: NodeJS.ProcessEnv;
}

export interface ServingPrincipals {
  /** At the transport's edge, before any work: the caller to carry through the call, or why it may not spend. */
  admit(credentials: ChatCredentials, spending: ModelSpending): ChatCaller | HerdError;
  /** The key a call runs as, from the caller admit() issued (or none, for calls made in process). */
  principal(request: ChatPortRequest): KeyInfo;
}

/** The principal keyless calls run as in open mode (no keys exist, so nothing to limit); the ledger's name for it. */
const OPEN_MODE_NAME = 'triton-serving';

export const KSERVE_MISSING_KEY_MESSAGE =
  "This model calls a paid upstream, so a request needs a gateway key: send 'Authorization: Bearer <key>' or 'x-api-key: <key>' " +
  "(HTTP headers or gRPC metadata; tritonclient: headers={'authorization': 'Bearer <key>'}, lowercase as gRPC requires).";
const KSERVE_NOT_LOCAL_MESSAGE =
  'This model calls a paid upstream and this Herd gateway has no API keys configured, so it only runs it for requests from the machine it runs on. Ask its administrator for a key.';

export function createServingPrincipals(options: ServingPrincipalsOptions): ServingPrincipals {
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
  const openKey: KeyInfo = createSyntheticKey({ id: `serving:${OPEN_MODE_NAME}`, name: OPEN_MODE_NAME });

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

  return {
    principal,
    admit(credentials, spending) {
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
  };
}

/** Marks a caller admitted without a key because the model names its own (gateway_key_env). */
const OWN_KEY = Symbol('own-key');

/** herd.yaml `serving.identity` as a principal like any key: its allowed models, limits and budget. */
function createIdentityKey(identity: ServingIdentity): KeyInfo {
  const budgets: BudgetRule[] = [];
  if (identity.budget_day !== undefined) budgets.push({ period: 'day', amountMicros: parseBudgetAmount(identity.budget_day, 'serving.identity.budget_day') });
  if (identity.budget_month !== undefined) budgets.push({ period: 'month', amountMicros: parseBudgetAmount(identity.budget_month, 'serving.identity.budget_month') });
  return createSyntheticKey({
    id: `serving:${identity.name}`,
    name: identity.name,
    allowedModels: identity.models,
    rpm: identity.rpm,
    tpm: identity.tpm,
    maxConcurrency: identity.max_concurrency,
    budgets,
  });
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
