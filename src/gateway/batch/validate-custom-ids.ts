// A batch's custom_ids seen so far, as 16 bytes of each id's SHA-256 in one open-addressing table (plus the
// line that used it): a 100,000-line batch's ids take a few megabytes however long the ids are.
import { hash } from 'node:crypto';

/** 32-bit words per slot: four of the hash, one for the line number (0: an empty slot). */
const SLOT = 5;
const INITIAL_SLOTS = 1024;

export class CustomIdSet {
  private table = new Uint32Array(INITIAL_SLOTS * SLOT);
  private slots = INITIAL_SLOTS;
  private used = 0;

  get size(): number {
    return this.used;
  }

  /** Adds `id` first seen on `lineNo` (≥ 1); returns the earlier line when the id was already there. */
  add(id: string, lineNo: number): number | undefined {
    const digest = hash('sha256', id, 'buffer');
    const a = digest.readUInt32LE(0);
    const b = digest.readUInt32LE(4);
    const c = digest.readUInt32LE(8);
    const d = digest.readUInt32LE(12);
    const found = this.find(a, b, c, d);
    const at = found * SLOT;
    if (this.table[at + 4] !== 0) return this.table[at + 4];
    this.table[at] = a;
    this.table[at + 1] = b;
    this.table[at + 2] = c;
    this.table[at + 3] = d;
    this.table[at + 4] = lineNo;
    this.used += 1;
    // Half full at most, so probe runs stay short.
    if (this.used * 2 > this.slots) this.grow();
    return undefined;
  }

  /** The slot holding the hash, else the empty slot where it goes (linear probing from the hash's first word). */
  private find(a: number, b: number, c: number, d: number): number {
    const mask = this.slots - 1;
    const t = this.table;
    for (let slot = a & mask; ; slot = (slot + 1) & mask) {
      const at = slot * SLOT;
      if (t[at + 4] === 0) return slot;
      if (t[at] === a && t[at + 1] === b && t[at + 2] === c && t[at + 3] === d) return slot;
    }
  }

  private grow(): void {
    const old = this.table;
    this.slots *= 2;
    this.table = new Uint32Array(this.slots * SLOT);
    for (let at = 0; at < old.length; at += SLOT) {
      if (old[at + 4] === 0) continue;
      const to = this.find(old[at]!, old[at + 1]!, old[at + 2]!, old[at + 3]!) * SLOT;
      this.table.set(old.subarray(at, at + SLOT), to);
    }
  }
}
