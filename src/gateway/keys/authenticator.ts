// Turns an Authorization header into the key a request runs as, with OpenAI's messages and
// semantics: missing key, incorrect key (masked), model not allowed. The HTTP layer maps the codes
// (UNAUTHENTICATED → 401, PERMISSION_DENIED → 403); nothing here knows about HTTP.
import { HerdError, toHerdError } from '../../core/errors.ts';
import { AuthFailureLimiter, type AuthFailureLimitSettings } from './auth-failure-limiter.ts';
import { type ClientAddress, isLoopbackAddress } from './client-address.ts';
import { constantTimeEqualHex, hashKeySecret } from './create-key-secret.ts';
import type { KeyInfo, KeyStore } from './key-store.ts';
import { maskKey, quoteUntrusted } from './mask-key.ts';

export type AuthResult = { key: KeyInfo } | HerdError;

export interface AuthenticatorOptions {
  store: KeyStore;
  /** The master key's value (never its variable's name alone); undefined when not configured. */
  masterKey?: string | undefined;
  /** Names the master key in KeyInfo.name, e.g. for the ledger: 'master ($HERD_MASTER_KEY)'. */
  masterKeyEnv?: string;
  /** Incorrect keys per client address before it is refused for the rest of the window (auth.failed_keys). */
  failureLimit?: AuthFailureLimitSettings;
  /** Wall clock, epoch ms (tests pin it). */
  now?: () => number;
}

export const MISSING_KEY_MESSAGE =
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";
const NOT_LOCAL_MESSAGE = 'This Herd gateway has no API keys configured, so it only accepts requests from the machine it runs on. Ask its administrator for a key.';
const FORWARDED_MESSAGE =
  'This Herd gateway has no API keys configured, so it only accepts requests from the machine it runs on; this one was forwarded from another machine by a proxy Herd does not trust. List the proxy in server.trusted_proxies, or give the gateway keys.';

/** Who an unauthenticated request runs as while the gateway is open. */
export const ANONYMOUS_KEY: KeyInfo = Object.freeze({ id: 'anonymous', name: 'anonymous', prefix: '', allowedModels: '*', role: 'client' });

export class Authenticator {
  private readonly store: KeyStore;
  private readonly masterHash: string | undefined;
  private readonly masterKeyInfo: KeyInfo;
  private readonly failures: AuthFailureLimiter;
  private open: boolean;

  constructor(options: AuthenticatorOptions) {
    this.store = options.store;
    // Keep only the digest: the comparison is digest against digest, in constant time.
    this.masterHash = options.masterKey ? hashKeySecret(options.masterKey) : undefined;
    this.masterKeyInfo = Object.freeze({
      id: 'master',
      name: `master ($${options.masterKeyEnv ?? 'HERD_MASTER_KEY'})`,
      prefix: '',
      allowedModels: '*',
      role: 'admin',
    });
    this.failures = new AuthFailureLimiter(options.failureLimit, options.now);
    this.open = this.masterHash === undefined && !this.store.hasActiveKeys();
  }

  /**
   * True while no master key is set and no key has ever been active since start-up. Latched: once
   * a key appears the gateway stays closed even if every key is later revoked, so a server that
   * started with keys (and so may listen beyond 127.0.0.1) can never fall open.
   */
  isOpen(): boolean {
    if (this.open && this.store.hasActiveKeys()) this.open = false;
    return this.open;
  }

  /**
   * `client`, when given, lets open mode refuse clients from other machines even if the server listens
   * on every interface (the KServe side may need to), and keys the wrong-key lockout. A string is the
   * peer's address as the socket gives it; HTTP passes the resolved address (resolve-client-address.ts).
   */
  authenticate(authorizationHeader: string | undefined, client?: string | ClientAddress): AuthResult {
    const from = typeof client === 'string' ? { address: client } : client;
    const remoteAddress = from?.address;
    try {
      if (this.isOpen()) {
        if (remoteAddress !== undefined && !isLoopbackAddress(remoteAddress)) return new HerdError('UNAUTHENTICATED', NOT_LOCAL_MESSAGE);
        if (from?.forwardedByUntrustedPeer === true) return new HerdError('UNAUTHENTICATED', FORWARDED_MESSAGE);
        // Clients such as the openai SDK always send some key; in open mode it is ignored.
        return { key: ANONYMOUS_KEY };
      }
      const token = parseBearerToken(authorizationHeader);
      if (token === undefined) return new HerdError('UNAUTHENTICATED', MISSING_KEY_MESSAGE);
      // Refused before the key is looked at: an address guessing keys learns nothing more, not even a right guess.
      const wait = remoteAddress === undefined ? undefined : this.failures.refusal(remoteAddress);
      if (wait !== undefined) {
        return new HerdError('RATE_LIMITED', `Too many requests with an incorrect API key from this address. Try again in ${wait} s.`, { retryAfterSeconds: wait });
      }
      if (this.masterHash !== undefined && constantTimeEqualHex(hashKeySecret(token), this.masterHash)) return { key: this.masterKeyInfo };
      const key = this.store.authenticate(token);
      if (key) return { key };
      if (remoteAddress !== undefined) this.failures.recordFailure(remoteAddress);
      return new HerdError('UNAUTHENTICATED', `Incorrect API key provided: ${maskKey(token)}.`, { reason: 'invalid_api_key' });
    } catch (err) {
      // A store failure fails closed; its message names the file, never the key.
      return toHerdError(err);
    }
  }

  /** PERMISSION_DENIED naming the model when `key` may not use it; undefined when it may. */
  authorizeModel(key: KeyInfo, model: string): HerdError | undefined {
    if (this.store.isModelAllowed(key, model)) return undefined;
    const allowed = key.allowedModels === '*' ? 'all' : key.allowedModels.join(', ') || 'none';
    return new HerdError('PERMISSION_DENIED', `The API key '${key.name}' is not allowed to use the model ${quoteUntrusted(model)}. Models it may use: ${allowed}.`, {
      param: 'model',
      reason: 'model_not_allowed',
    });
  }
}

/** The token of `Bearer TOKEN` (scheme case-insensitive, as RFC 9110 says), else undefined. */
export function parseBearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bearer\s+(.*?)\s*$/is.exec(header);
  const token = match?.[1];
  return token ? token : undefined;
}

export { isLoopbackAddress };
