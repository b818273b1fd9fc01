// The FileStore on a local folder (batch.files.dir): each file written to a temporary name, fsynced, renamed into
// place and the folder fsynced, so after a crash a ref names either the whole file or nothing.
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { HerdError } from '../../core/errors.ts';
import { type ByteRange, type FileStore, LineCounter, type PutLimits, type StoredBytes } from './file-store.ts';

const REF = /^[0-9a-f]{32}$/;
const TEMP_PREFIX = '.partial-';
/** A partial file older than this was left by a crash (replicas sharing the folder may be writing younger ones). */
const STALE_PARTIAL_MS = 24 * 3600_000;

export class DirectoryFileStore implements FileStore {
  private ready: Promise<void> | undefined;

  constructor(readonly dir: string) {}

  async put(source: AsyncIterable<Buffer | Uint8Array>, limits: PutLimits): Promise<StoredBytes> {
    await this.prepare();
    const ref = randomBytes(16).toString('hex');
    const temp = join(this.dir, `${TEMP_PREFIX}${ref}`);
    const counter = new LineCounter(limits);
    const handle = await open(temp, 'wx', 0o600);
    try {
      // One chunk in memory at a time: the write is awaited before the next is read, so a slow disk slows the upload.
      for await (const chunk of source) {
        counter.add(chunk);
        await handle.write(chunk);
      }
      counter.finish();
      await handle.sync();
    } catch (err) {
      await handle.close().catch(() => undefined);
      await rm(temp, { force: true });
      throw wrapFailure(err, 'writing a batch file');
    }
    await handle.close();
    await rename(temp, join(this.dir, ref));
    await syncDir(this.dir);
    return { ref, bytes: counter.bytes, lines: counter.lines };
  }

  async open(ref: string, range?: ByteRange): Promise<Readable> {
    const path = this.pathOf(ref);
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new HerdError('NOT_FOUND', `the bytes of batch file ${ref} are missing from ${this.dir}`);
      throw wrapFailure(err, 'reading a batch file');
    }
    return createReadStream('', { fd: handle, autoClose: true, ...(range ?? {}) });
  }

  async delete(ref: string): Promise<void> {
    await rm(this.pathOf(ref), { force: true });
  }

  /** Creates the folder and removes files a crashed upload left half written a day ago or more. */
  private prepare(): Promise<void> {
    this.ready ??= (async () => {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      const staleBefore = Date.now() - STALE_PARTIAL_MS;
      for (const name of await readdir(this.dir)) {
        if (!name.startsWith(TEMP_PREFIX)) continue;
        const path = join(this.dir, name);
        const info = await stat(path).catch(() => undefined);
        if (info !== undefined && info.mtimeMs < staleBefore) await rm(path, { force: true });
      }
    })().catch((err) => {
      this.ready = undefined;
      throw wrapFailure(err, `preparing ${this.dir}`);
    });
    return this.ready;
  }

  private pathOf(ref: string): string {
    if (!REF.test(ref)) throw new HerdError('NOT_FOUND', 'no such batch file in the file store');
    return join(this.dir, ref);
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function wrapFailure(err: unknown, doing: string): HerdError {
  if (err instanceof HerdError) return err;
  return new HerdError('UNAVAILABLE', `file store failed ${doing}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
