// Random trace and span ids as lowercase hex, cut from a pooled buffer of random bytes so a span costs no
// system call and no conversion of its own.
import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
// The pool as one hex string: an id is a slice of it (a JS operation), not a call into C++ per id.
let hexPool = '';
let offset = POOL_BYTES;

function take(bytes: number): string {
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    hexPool = pool.toString('hex');
    offset = 0;
  }
  const hex = hexPool.slice(offset * 2, (offset + bytes) * 2);
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
