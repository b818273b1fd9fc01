// Request ids as UUIDv7 (RFC 9562): time-ordered, so ledger rows append to the end of the primary-key
// index instead of landing at random pages (docs/decisions/uuidv7-request-ids.md), and still unique across replicas through 62 random bits.
import { randomFillSync } from 'node:crypto';

const pool = Buffer.alloc(4096);
let offset = pool.length;
let lastMs = 0;
/** 12-bit sequence within one millisecond (rand_a), so ids made in the same ms still sort in order. */
let sequence = 0;

function randomBytes(n: number): Buffer {
  if (offset + n > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const out = pool.subarray(offset, offset + n);
  offset += n;
  return out;
}

export function createRequestId(now: number = Date.now()): string {
  let ms = Math.max(now, lastMs);
  if (ms === lastMs) {
    sequence++;
    // 4096 ids in one millisecond: borrow the next millisecond rather than lose the order.
    if (sequence > 0xfff) {
      ms++;
      sequence = 0;
    }
  } else {
    sequence = randomBytes(1)[0]! & 0x7f;
  }
  lastMs = ms;
  const id = Buffer.allocUnsafe(16);
  id.writeUIntBE(ms, 0, 6);
  id.writeUInt16BE(0x7000 | sequence, 6);
  randomBytes(8).copy(id, 8);
  id[8] = (id[8]! & 0x3f) | 0x80;
  const h = id.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
