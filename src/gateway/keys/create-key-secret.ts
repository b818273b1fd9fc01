// Gateway key material: generation (`sk-herd-` + 256 random bits in base62), the hash the store
// keeps, the short display prefix, and a constant-time comparison for the one place we compare.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'sk-herd-';
/** `sk-herd-` plus 4 random characters: recognisable in a list, useless to an attacker. */
export const DISPLAY_PREFIX_LENGTH = 12;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 62^43 > 2^256, so 43 characters hold any 32-byte value; fixed length keeps keys uniform. */
const BODY_LENGTH = 43;

export interface KeySecret {
  secret: string;
  hash: string;
  prefix: string;
}

export function createKeySecret(): KeySecret {
  const secret = KEY_PREFIX + encodeBase62(randomBytes(32));
  return { secret, hash: hashKeySecret(secret), prefix: secret.slice(0, DISPLAY_PREFIX_LENGTH) };
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
  return text.startsWith(KEY_PREFIX) && text.length > DISPLAY_PREFIX_LENGTH;
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
