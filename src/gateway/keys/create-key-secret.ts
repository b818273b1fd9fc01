// Gateway key material: public ids (`hk_…`, `tm_…`), secrets (`sk-herd-<public id>-` + 256 random bits in
// base62; before #28 `sk-herd-` + the random part), the hash the store keeps, the short display prefix.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'sk-herd-';
/** A secret made before #28: `sk-herd-` plus 4 random characters. */
export const DISPLAY_PREFIX_LENGTH = 12;
/** Random characters a display prefix shows after the public id: recognisable in a list, useless to an attacker. */
const SHOWN_RANDOM = 4;
const PUBLIC_ID_LENGTH = 16;
const NEW_FORM = /^sk-herd-((?:hk|key)_[0-9A-Za-z]+)-/;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 62^43 > 2^256, so 43 characters hold any 32-byte value; fixed length keeps keys uniform. */
const BODY_LENGTH = 43;

export interface KeySecret {
  secret: string;
  hash: string;
  prefix: string;
}

/** `hk_` (key) or `tm_` (team) + 16 base62 characters (95 bits: unique without coordination, and safe to log). */
export function createPublicId(kind: 'hk' | 'tm'): string {
  return `${kind}_${encodeBase62(randomBytes(16)).slice(-PUBLIC_ID_LENGTH)}`;
}

/** A new secret for the key `publicId`: the id inside tells an operator whose key a leaked secret is. */
export function createKeySecret(publicId: string = createPublicId('hk')): KeySecret {
  const secret = `${KEY_PREFIX}${publicId}-${encodeBase62(randomBytes(32))}`;
  return { secret, hash: hashKeySecret(secret), prefix: displayPrefixOf(secret) };
}

/** `sk-herd-hk_…-abcd` (the public id and 4 random characters), or the first 12 characters of a secret made before #28. */
export function displayPrefixOf(secret: string): string {
  const id = NEW_FORM.exec(secret);
  return id ? secret.slice(0, id[0].length + SHOWN_RANDOM) : secret.slice(0, DISPLAY_PREFIX_LENGTH);
}

/**
 * Plain SHA-256 (hex) is the right hash here, unlike for passwords: a key carries 256 bits from
 * crypto.randomBytes, so there is nothing to brute-force or look up in a dictionary, and a slow
 * KDF (bcrypt, scrypt) would only add milliseconds to every request. No salt is needed for the
 * same reason, and an unsalted hash lets authenticate() find a key by a single map lookup.
 */
export function hashKeySecret(secret: string): string {
  let digest = recentDigests.get(secret);
  if (digest === undefined) {
    digest = hash('sha256', secret, 'hex');
    // Bounded: a client spraying random keys only ever costs this much memory.
    if (recentDigests.size >= RECENT_DIGESTS) recentDigests.clear();
    recentDigests.set(secret, digest);
  }
  return digest;
}

/** Every request of a client hashes the same key: the digests of the keys seen lately, by key. */
const recentDigests = new Map<string, string>();
const RECENT_DIGESTS = 1024;

/** Compares two SHA-256 hex digests in constant time. Comparing digests rather than the secrets
 *  keeps the lengths equal, so neither where they differ nor how long the secret is can leak. */
export function constantTimeEqualHex(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/** True for strings shaped like a Herd key, so callers can avoid echoing one back. */
export function looksLikeKeySecret(text: string): boolean {
  return text.startsWith(KEY_PREFIX) && text.length > displayPrefixOf(text).length;
}

function encodeBase62(bytes: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
  let out = '';
  for (let i = 0; i < BODY_LENGTH; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}
