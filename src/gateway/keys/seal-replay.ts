// Sealing a replayable answer that may hold a secret (a rotation's secret, an idempotent admin answer): AES-256-GCM
// under HKDF-SHA256 of the id the client presents again, which the tables keep only hashed.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const INFO = 'herd-replay-v1';

function deriveKey(passphrase: string, salt: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', passphrase, salt, INFO, 32));
}

/** base64url(salt 16 | iv 12 | tag 16 | ciphertext). */
export function seal(passphrase: string, plaintext: string): string {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(passphrase, salt), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return Buffer.concat([salt, iv, cipher.getAuthTag(), body]).toString('base64url');
}

/** The plaintext, or undefined when the passphrase is not the one it was sealed under (or the text was altered). */
export function unseal(passphrase: string, sealed: string): string | undefined {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', deriveKey(passphrase, bytes.subarray(0, 16)), bytes.subarray(16, 28));
    decipher.setAuthTag(bytes.subarray(28, 44));
    return Buffer.concat([decipher.update(bytes.subarray(44)), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}
