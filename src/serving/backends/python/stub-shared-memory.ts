// One stub's shared-memory segment under /dev/shm: large input tensors are written into its first half
// for the stub to map as numpy views, large outputs come back through its second half; small ones stay
// on the pipe. The file is unlinked as soon as the stub holds it, so neither a crash nor a SIGKILL of
// Herd can leave it behind (see docs/decisions/python-backend-transport.md).
import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';

export const SHM_DIR = '/dev/shm';
/** Tensors smaller than this cross the pipe: below it the segment's extra system calls cost more than they save. */
export const SHM_MIN_TENSOR_BYTES = 64 * 1024;
const PREFIX = 'herd-py-';
/** Offsets inside the segment stay 64-byte aligned, so numpy views of any dtype are aligned. */
const ALIGN = 64;

/** A range of the input half the stub may still be reading (its arrays alive); freed when the stub says so. */
interface Slot {
  offset: number;
  size: number;
}

export class StubSharedMemory {
  private fd: number | undefined;
  private path: string | undefined;
  private readonly slots = new Map<number, Slot>();
  private nextSlot = 0;
  readonly inputBytes: number;

  private constructor(
    fd: number,
    path: string,
    readonly size: number,
  ) {
    this.fd = fd;
    this.path = path;
    this.inputBytes = Math.floor(size / 2 / ALIGN) * ALIGN;
  }

  /**
   * Creates the segment, sized but sparse (tmpfs gives pages only when written). Undefined when /dev/shm
   * is missing or refuses: the stub then uses the pipe for everything.
   */
  static create(size: number, log: (line: string) => void): StubSharedMemory | undefined {
    if (size < 2 * SHM_MIN_TENSOR_BYTES || !existsSync(SHM_DIR)) return undefined;
    const path = join(SHM_DIR, `${PREFIX}${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      const fd = openSync(path, 'wx+', 0o600);
      try {
        ftruncateSync(fd, size);
      } catch (err) {
        closeSync(fd);
        unlinkSync(path);
        throw err;
      }
      return new StubSharedMemory(fd, path, size);
    } catch (err) {
      log(`python backend: no shared memory segment (${(err as Error).message}); tensors cross the pipe`);
      return undefined;
    }
  }

  /** The descriptor to hand the stub (as its fd 5). */
  get handle(): number | undefined {
    return this.fd;
  }

  /** The file's name is no longer needed once the stub inherited the descriptor. */
  unlink(): void {
    if (this.path === undefined) return;
    try {
      unlinkSync(this.path);
    } catch {
      // Already gone (a sweep by another Herd); the descriptors keep the memory until they close.
    }
    this.path = undefined;
  }

  close(): void {
    this.unlink();
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    this.slots.clear();
  }

  /**
   * Reserves `size` bytes of the input half for one batch; undefined when they do not fit beside the
   * slots the stub still holds (the batch then crosses the pipe).
   */
  reserve(size: number): { id: number; offset: number } | undefined {
    if (this.fd === undefined || size > this.inputBytes) return undefined;
    const taken = [...this.slots.values()].sort((a, b) => a.offset - b.offset);
    let offset = 0;
    for (const slot of taken) {
      if (slot.offset - offset >= size) break;
      offset = align(slot.offset + slot.size);
    }
    if (offset + size > this.inputBytes) return undefined;
    const id = ++this.nextSlot;
    this.slots.set(id, { offset, size });
    return { id, offset };
  }

  /** Slots the stub released (their arrays are gone), as it lists them in its replies. */
  release(ids: unknown): void {
    if (!Array.isArray(ids)) return;
    for (const id of ids) this.slots.delete(Number(id));
  }

  /** Writes bytes at an absolute offset (input half); false when tmpfs is full (ENOSPC): use the pipe. */
  write(bytes: Uint8Array, offset: number): boolean {
    if (this.fd === undefined) return false;
    try {
      let done = 0;
      while (done < bytes.byteLength) done += writeSync(this.fd, bytes, done, bytes.byteLength - done, offset + done);
      return true;
    } catch {
      return false;
    }
  }

  /** A copy of `size` bytes at `offset` of the output half, which the stub reuses for its next reply. */
  readOutput(offset: number, size: number): Buffer {
    if (this.fd === undefined) throw new Error('shared memory segment closed');
    if (offset < 0 || offset + size > this.size - this.inputBytes) throw new Error(`output range ${offset}+${size} outside the segment`);
    const out = Buffer.allocUnsafe(size);
    let done = 0;
    while (done < size) {
      const n = readSync(this.fd, out, done, size - done, this.inputBytes + offset + done);
      if (n === 0) throw new Error('short read from the shared memory segment');
      done += n;
    }
    return out;
  }
}

export function align(n: number): number {
  return Math.ceil(n / ALIGN) * ALIGN;
}

/** Removes segments a Herd that is gone left behind (a crash between creating one and handing it over). */
export function sweepStaleSegments(isAlive: (pid: number) => boolean = processAlive): string[] {
  if (!existsSync(SHM_DIR)) return [];
  const removed: string[] = [];
  for (const name of readdirSync(SHM_DIR)) {
    const match = /^herd-py-(\d+)-[0-9a-f]+$/.exec(name);
    if (!match || isAlive(Number(match[1]))) continue;
    try {
      unlinkSync(join(SHM_DIR, name));
      removed.push(name);
    } catch {
      // Another Herd swept it first.
    }
  }
  return removed;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
