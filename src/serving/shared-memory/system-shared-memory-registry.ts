// System shared memory regions registered by clients (Triton's shared-memory extension): a region is a
// window of a POSIX shm object under /dev/shm; inputs are read from it and outputs written into it.
// Node has no mmap, so each region keeps its file open and moves bytes with positioned reads and writes.
import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { HerdError, invalidArg, notFound } from '../../core/errors.ts';

export interface SystemSharedMemoryStatus {
  name: string;
  key: string;
  offset: number;
  byte_size: number;
}

/** A tensor's place in a registered region (the shared_memory_* parameters of an input or output). */
export interface SharedMemoryRef {
  region: string;
  offset: number;
  byteSize: number;
}

interface Region extends SystemSharedMemoryStatus {
  fd: number;
}

/** Triton reserves keys starting with this prefix for its own regions. */
const RESERVED_PREFIX = 'triton_python_backend_shm_region_';

export class SystemSharedMemoryRegistry {
  private readonly regions = new Map<string, Region>();

  constructor(private readonly shmDirectory = '/dev/shm') {}

  register(name: string, key: string, offset: number, byteSize: number): void {
    validateKey(name, key);
    if (this.regions.has(name)) throw new HerdError('ALREADY_EXISTS', `shared memory region '${name}' already in manager`);
    let fd: number;
    try {
      fd = openSync(this.pathOf(key), 'r+');
    } catch {
      throw new HerdError('INTERNAL', `Unable to open shared memory region: '${key}'`);
    }
    try {
      const size = fstatSync(fd).size;
      if (offset < 0 || byteSize < 0 || offset + byteSize > size) throw invalidArg(`failed to register shared memory region '${name}': invalid args`);
    } catch (err) {
      closeSync(fd);
      throw err instanceof HerdError ? err : new HerdError('INTERNAL', `Invalid shared memory region: '${key}'`);
    }
    this.regions.set(name, { name, key, offset, byte_size: byteSize, fd });
  }

  /** Unregisters one region, or every region without a name; an unknown name is no error (as in Triton). */
  unregister(name?: string): void {
    const names = name === undefined || name === '' ? [...this.regions.keys()] : [name];
    for (const n of names) {
      const region = this.regions.get(n);
      if (!region) continue;
      this.regions.delete(n);
      closeSync(region.fd);
    }
  }

  status(name?: string): SystemSharedMemoryStatus[] {
    if (name === undefined || name === '') return [...this.regions.values()].map(describe);
    const region = this.regions.get(name);
    if (!region) throw notFound(`Unable to find system shared memory region: '${name}'`);
    return [describe(region)];
  }

  /** A copy of `ref.byteSize` bytes of the region, after Triton's bounds checks. */
  read(ref: SharedMemoryRef): Buffer {
    const region = this.locate(ref);
    // allocUnsafe starts on an 8-byte boundary, so typed arrays can view the result directly.
    const out = Buffer.allocUnsafe(ref.byteSize);
    let done = 0;
    while (done < ref.byteSize) {
      const n = readSync(region.fd, out, done, ref.byteSize - done, region.offset + ref.offset + done);
      if (n === 0) throw new HerdError('INTERNAL', `shared memory region '${ref.region}' is shorter than registered`);
      done += n;
    }
    return out;
  }

  /** Writes an output into its region; the region must be large enough, as Triton's allocator checks. */
  write(ref: SharedMemoryRef, outputName: string, bytes: Uint8Array): void {
    const region = this.locate(ref);
    if (bytes.byteLength > ref.byteSize) {
      throw new HerdError(
        'INTERNAL',
        `shared memory size specified with the request for output '${outputName}' (${ref.byteSize} bytes) should be at least ${bytes.byteLength} bytes to hold the results`,
      );
    }
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(region.fd, bytes, done, bytes.byteLength - done, region.offset + ref.offset + done);
  }

  /** Checks a reference before inference (Triton checks outputs' regions when the request is built). */
  check(ref: SharedMemoryRef): void {
    this.locate(ref);
  }

  close(): void {
    this.unregister();
  }

  private locate(ref: SharedMemoryRef): Region {
    const region = this.regions.get(ref.region);
    if (!region) throw notFound(`Unable to find shared memory region: '${ref.region}'`);
    if (ref.offset < 0 || ref.offset >= region.byte_size) throw invalidArg(`Invalid offset for shared memory region: '${ref.region}'`);
    if (ref.byteSize < 0 || ref.offset + ref.byteSize > region.byte_size) {
      throw invalidArg(`Invalid offset + byte size for shared memory region: '${ref.region}'`);
    }
    return region;
  }

  private pathOf(key: string): string {
    // shm_open names are "/name"; only a single path component is valid.
    const bare = key.replace(/^\/+/, '');
    if (bare.includes('/')) throw new HerdError('INTERNAL', `Unable to open shared memory region: '${key}'`);
    return join(this.shmDirectory, bare);
  }
}

function validateKey(name: string, key: string): void {
  const bare = key.replace(/^\/+/, '');
  if (bare === '') throw invalidArg(`cannot register shared memory region '${name}' - invalid shm key '${key}'`);
  // A client's key names a file under /dev/shm: one path component of printable characters, as shm_open takes.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (bare.includes('/') || /[\u0000-\u001f\u007f-\u009f]/.test(bare) || Buffer.byteLength(bare) > 255) {
    throw invalidArg(
      `cannot register shared memory region '${name}' - invalid shm key ${JSON.stringify(key)}: a key is one name of at most 255 bytes without '/' or control characters`,
    );
  }
  if (bare.startsWith(RESERVED_PREFIX)) {
    throw invalidArg(`cannot register shared memory region '${name}' with key '${key}' as the key contains the reserved prefix '${RESERVED_PREFIX}'`);
  }
}

function describe(region: Region): SystemSharedMemoryStatus {
  return { name: region.name, key: region.key, offset: region.offset, byte_size: region.byte_size };
}
