// Turns an Authorization header into the key a request runs as, with OpenAI's messages and semantics:
// missing, incorrect (masked), rotated, expired, revoked or blocked key, a client address outside the key's
// CIDRs, a model the key or its team may not use. The HTTP layer maps the codes (UNAUTHENTICATED → 401,
// PERMISSION_DENIED → 403); nothing here knows about HTTP.
import { BlockList, isIPv6 } from 'node:net';
import { HerdError, toHerdError } from '../../core/errors.ts';
import { AuthFailureLimiter, type AuthFailureLimitSettings } from './auth-failure-limiter.ts';
import { type ClientAddress, isLoopbackAddress } from './client-address.ts';
import { constantTimeEqualHex, hashKeySecret } from './create-key-secret.ts';
import type { KeyInfo, KeyLookup, KeyStore } from './key-store.ts';
import { createSyntheticKey } from './synthetic-key.ts';
import { allows, isModelAllowed } from './is-model-allowed.ts';
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
export const ANONYMOUS_KEY: KeyInfo = createSyntheticKey({ id: 'anonymous', name: 'anonymous' });

export class Authenticator {
  private readonly store: KeyStore;
  private readonly masterHash: string | undefined;
  private readonly masterKeyInfo: KeyInfo;
  private readonly failures: AuthFailureLimiter;
  private open: boolean;
  private readonly now: () => number;

  constructor(options: AuthenticatorOptions) {
    this.store = options.store;
    // Keep only the digest: the comparison is digest against digest, in constant time.
    this.masterHash = options.masterKey ? hashKeySecret(options.masterKey) : undefined;
    this.masterKeyInfo = createSyntheticKey({ id: 'master', name: `master ($${options.masterKeyEnv ?? 'HERD_MASTER_KEY'})`, role: 'admin' });
    this.failures = new AuthFailureLimiter(options.failureLimit, options.now);
    this.now = options.now ?? Date.now;
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
      const found = this.store.lookup(token);
      if (found.state === 'unknown') {
        if (remoteAddress !== undefined) this.failures.recordFailure(remoteAddress);
        return new HerdError('UNAUTHENTICATED', `Incorrect API key provided: ${maskKey(token)}.`, { reason: 'invalid_api_key' });
      }
      const refusal = refuseLookup(found, this.now()) ?? refuseAddress(found.key, remoteAddress);
      if (refusal) {
        refusedKeys.set(refusal, found.key);
        return refusal;
      }
      this.store.touch(found.key.id, this.now());
      return { key: found.key };
    } catch (err) {
      // A store failure fails closed; its message names the file, never the key.
      return toHerdError(err);
    }
  }

  /**
   * A console session's check on every use: the secret it signed in with (by SHA-256) must still authenticate
   * now — not revoked, blocked, expired, rotated past its grace, nor used from outside the key's CIDRs.
   */
  authenticateSecretHash(secretHash: string, client?: ClientAddress): AuthResult {
    try {
      if (this.masterHash !== undefined && constantTimeEqualHex(secretHash, this.masterHash)) return { key: this.masterKeyInfo };
      const found = this.store.lookupSecretHash(secretHash);
      if (found.state === 'unknown')
        return new HerdError('UNAUTHENTICATED', 'The key this console session signed in with is no longer valid. Sign in again.', { reason: 'key_revoked' });
      const refusal = refuseLookup(found, this.now()) ?? refuseAddress(found.key, client?.address);
      if (refusal) return refusal;
      this.store.touch(found.key.id, this.now());
      return { key: found.key };
    } catch (err) {
      return toHerdError(err);
    }
  }

  /**
   * A batch's owner when its lines run: the key as it stands now, by public id (the master key and open mode's
   * anonymous key by theirs). A key revoked, blocked or expired since submission gets no more lines run.
   */
  authenticateKeyId(keyId: string): AuthResult {
    if (keyId === this.masterKeyInfo.id)
      return this.masterHash === undefined ? new HerdError('UNAUTHENTICATED', 'the master key is no longer configured') : { key: this.masterKeyInfo };
    if (keyId === ANONYMOUS_KEY.id) return { key: ANONYMOUS_KEY };
    try {
      const found = this.store.lookupKeyId(keyId);
      if (found.state === 'unknown') return new HerdError('UNAUTHENTICATED', `key ${keyId} no longer exists`, { reason: 'key_revoked' });
      return refuseLookup(found, this.now()) ?? { key: found.key };
    } catch (err) {
      return toHerdError(err);
    }
  }

  /**
   * While open, a store other replicas write (PostgreSQL) is asked once more before a keyless request
   * passes: a key created on another replica closes the gateway for the very next request, not after the
   * notification arrives. Open mode is a single-machine mode, so the round trip costs nothing that matters.
   */
  async confirmOpen(): Promise<boolean> {
    if (this.isOpen() && this.store.kind === 'postgres') await this.store.refresh();
    return this.isOpen();
  }

  /** PERMISSION_DENIED naming the model when `key` (or its team) may not use it; undefined when it may. */
  authorizeModel(key: KeyInfo, model: string): HerdError | undefined {
    if (isModelAllowed(key, model)) return undefined;
    const team = key.team;
    const byTeam = team !== undefined && allows(key.allowedModels, model) ? ` (its team '${team.name}' allows: ${describeModels(team.allowedModels)})` : '';
    return new HerdError(
      'PERMISSION_DENIED',
      `The API key '${key.name}' is not allowed to use the model ${quoteUntrusted(model)}${byTeam}. Models it may use: ${describeModels(key.allowedModels)}.`,
      { param: 'model', reason: 'model_not_allowed' },
    );
  }
}

function describeModels(models: KeyInfo['allowedModels']): string {
  return models === '*' ? 'all' : models.join(', ') || 'none';
}

/** Why a secret that names a key may not be used now, or undefined when it may (active, or in its rotation grace). */
function refuseLookup(found: Exclude<KeyLookup, { state: 'unknown' }>, now: number): HerdError | undefined {
  const who = `The API key '${found.key.name}' (${found.key.id})`;
  switch (found.state) {
    case 'active':
      break;
    case 'grace':
      // The store judged the grace by its clock when it loaded; the window ends by ours.
      if (found.graceUntil <= now) return rotatedError(who, found.rotatedAt);
      break;
    case 'rotated':
      return rotatedError(who, found.rotatedAt);
    case 'expired':
      return new HerdError('UNAUTHENTICATED', `${who} expired on ${formatInstant(found.expiredAt)}. Ask its administrator to extend it or issue a new key.`, {
        reason: 'key_expired',
      });
    case 'revoked':
      return new HerdError('UNAUTHENTICATED', `${who} was revoked on ${formatInstant(found.revokedAt)}.`, { reason: 'key_revoked' });
    case 'blocked':
      return new HerdError('PERMISSION_DENIED', `${who} is blocked by an administrator. Ask them to unblock it (herd keys unblock ${found.key.name}).`, {
        reason: 'key_blocked',
      });
  }
  const expiresAt = found.key.expiresAt;
  if (expiresAt !== undefined && expiresAt <= now) {
    return new HerdError('UNAUTHENTICATED', `${who} expired on ${formatInstant(expiresAt)}. Ask its administrator to extend it or issue a new key.`, { reason: 'key_expired' });
  }
  return undefined;
}

function rotatedError(who: string, rotatedAt: number): HerdError {
  return new HerdError('UNAUTHENTICATED', `${who} was rotated on ${formatInstant(rotatedAt)}; this secret's grace period is over. Use the new secret.`, {
    reason: 'key_rotated',
  });
}

/** PERMISSION_DENIED when the key names client CIDRs and the request came from outside all of them. */
function refuseAddress(key: KeyInfo, address: string | undefined): HerdError | undefined {
  if (key.allowedCidrs.length === 0) return undefined;
  if (address !== undefined && cidrListOf(key).check(stripMappedPrefix(address), isIPv6(stripMappedPrefix(address)) ? 'ipv6' : 'ipv4')) return undefined;
  return new HerdError(
    'PERMISSION_DENIED',
    `The API key '${key.name}' may only be used from ${key.allowedCidrs.join(', ')}; this request came from ${address ?? 'an unknown address'}.`,
    {
      reason: 'address_not_allowed',
    },
  );
}

/** One BlockList per key object: keys are frozen and replaced wholesale when the store changes. */
const cidrLists = new WeakMap<KeyInfo, BlockList>();
function cidrListOf(key: KeyInfo): BlockList {
  let list = cidrLists.get(key);
  if (list === undefined) {
    list = new BlockList();
    for (const cidr of key.allowedCidrs) {
      const [net, bits] = cidr.split('/') as [string, string | undefined];
      const family = isIPv6(net) ? 'ipv6' : 'ipv4';
      list.addSubnet(net, bits === undefined ? (family === 'ipv6' ? 128 : 32) : Number(bits), family);
    }
    cidrLists.set(key, list);
  }
  return list;
}

/** `::ffff:10.0.0.1` (a dual-stack socket's IPv4 peer) is 10.0.0.1 to an IPv4 CIDR. */
function stripMappedPrefix(address: string): string {
  return /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(address) ? address.slice(7) : address;
}

function formatInstant(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Refusals of a known key (blocked, expired, rotated, revoked, outside its CIDRs), for the audit row's actor. */
const refusedKeys = new WeakMap<HerdError, KeyInfo>();

/** The key `error` refused, when it was a real key that may not be used now; undefined for any other error. */
export function keyRefusedBy(error: HerdError): KeyInfo | undefined {
  return refusedKeys.get(error);
}

/** The token of `Bearer TOKEN` (scheme case-insensitive, as RFC 9110 says), else undefined. */
export function parseBearerToken(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const match = /^\s*bearer\s+(.*?)\s*$/is.exec(header);
  const token = match?.[1];
  return token ? token : undefined;
}

export { isLoopbackAddress };
