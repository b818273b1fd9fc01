// Public ids of the batch half, shaped as the APIs they answer for: `file-…`, `batch_…`, `msgbatch_…`.
import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 24 characters of a 62-letter alphabet (about 143 bits), as OpenAI's ids look. */
export function randomIdText(length = 24): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  // Bytes at or above 248 would favour the first letters; they are skipped (the extra bytes make room).
  for (const b of bytes) {
    if (b >= 248) continue;
    out += ALPHABET[b % 62];
    if (out.length === length) return out;
  }
  return out + randomIdText(length - out.length);
}

export const createFileId = () => `file-${randomIdText()}`;
export const createBatchId = () => `batch_${randomIdText()}`;
export const createMessageBatchId = () => `msgbatch_${randomIdText()}`;
