// Random trace and span ids as lowercase hex, cut from a pooled buffer of random bytes so a span costs no
// system call of its own.
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;

function take(bytes: number): string {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}

/** 16 random bytes; all-zero (invalid by W3C) is drawn again. */
export function newTraceId(): string {
  for (;;) {
    const id = take(16);
    if (id !== '00000000000000000000000000000000') return id;
  }
}

/** 8 random bytes, never all zero. */
export function newSpanId(): string {
  for (;;) {
    const id = take(8);
    if (id !== '0000000000000000') return id;
  }
}
