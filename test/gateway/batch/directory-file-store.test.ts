// The folder file store: bytes and non-empty lines counted while writing, refused past the limits with nothing left
// behind, ranges read back, refs that are not the store's refused, a deleted ref gone, old partial files cleaned.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { HerdError } from '../../../src/core/errors.ts';
import { DirectoryFileStore } from '../../../src/gateway/batch/directory-file-store.ts';
import { LineCounter } from '../../../src/gateway/batch/file-store.ts';

const LIMITS = { maxBytes: 1 << 20, maxLines: 100 };
const chunks = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)));

function withDir(body: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-file-store-'));
    try {
      await body(join(dir, 'files'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

describe('LineCounter', () => {
  it('counts non-empty lines across chunk boundaries, a last line without a newline, and ignores blank ones', () => {
    const counter = new LineCounter(LIMITS);
    for (const part of ['{"a":1}\n{"b"', ':2}\r\n\n   \n\t\r', '\n{"c":3}']) counter.add(Buffer.from(part));
    counter.finish();
    assert.equal(counter.lines, 3);
    assert.equal(counter.bytes, Buffer.byteLength('{"a":1}\n{"b":2}\r\n\n   \n\t\r\n{"c":3}'));
  });

  it('refuses one line too many and one byte too many', () => {
    const lines = new LineCounter({ maxBytes: 1000, maxLines: 2 });
    assert.throws(
      () => lines.add(Buffer.from('a\nb\nc\n')),
      (err: unknown) => err instanceof HerdError && err.code === 'INVALID_ARG' && /more than 2 requests/.test(err.message),
    );
    const bytes = new LineCounter({ maxBytes: 4, maxLines: 10 });
    bytes.add(Buffer.from('abcd'));
    assert.throws(
      () => bytes.add(Buffer.from('e')),
      (err: unknown) => err instanceof HerdError && err.code === 'PAYLOAD_TOO_LARGE',
    );
  });
});

describe('DirectoryFileStore', () => {
  it(
    'stores a stream whole, reads it and a range of it back, deletes it',
    withDir(async (dir) => {
      const store = new DirectoryFileStore(dir);
      const stored = await store.put(chunks('{"custom_id":"a"}\n', '{"custom_id":"b"}\n'), LIMITS);
      assert.equal(stored.bytes, 36);
      assert.equal(stored.lines, 2);
      assert.deepEqual(readdirSync(dir), [stored.ref], 'only the renamed file, no partial one');
      assert.equal(await text(await store.open(stored.ref)), '{"custom_id":"a"}\n{"custom_id":"b"}\n');
      assert.equal(await text(await store.open(stored.ref, { start: 18, end: 34 })), '{"custom_id":"b"}');
      await store.delete(stored.ref);
      await store.delete(stored.ref);
      await assert.rejects(store.open(stored.ref), (err: unknown) => err instanceof HerdError && err.code === 'NOT_FOUND');
    }),
  );

  it(
    'leaves nothing behind when the source is too large or fails midway',
    withDir(async (dir) => {
      const store = new DirectoryFileStore(dir);
      await assert.rejects(
        store.put(chunks('x'.repeat(600), 'y'.repeat(600)), { maxBytes: 1000, maxLines: 10 }),
        (err: unknown) => err instanceof HerdError && err.code === 'PAYLOAD_TOO_LARGE',
      );
      const failing = new Readable({
        read() {
          this.push(Buffer.from('{"a":1}\n'));
          this.destroy(new Error('client went away'));
        },
      });
      await assert.rejects(store.put(failing, LIMITS), /client went away/);
      assert.deepEqual(readdirSync(dir), []);
    }),
  );

  it(
    'refuses refs that are not its own (no path leaves the folder), and removes partial files a crash left a day ago',
    withDir(async (dir) => {
      const store = new DirectoryFileStore(dir);
      await assert.rejects(store.open('../herd.db'), (err: unknown) => err instanceof HerdError && err.code === 'NOT_FOUND');
      await store.put(chunks('a\n'), LIMITS);
      const old = join(dir, '.partial-0123');
      const young = join(dir, '.partial-4567');
      writeFileSync(old, 'half');
      writeFileSync(young, 'half');
      const dayAgo = (Date.now() - 25 * 3600_000) / 1000;
      utimesSync(old, dayAgo, dayAgo);
      // A new store (a restart) cleans on its first write.
      await new DirectoryFileStore(dir).put(chunks('b\n'), LIMITS);
      const names = readdirSync(dir);
      assert.equal(names.includes('.partial-0123'), false);
      assert.equal(names.includes('.partial-4567'), true, 'a younger one may be another replica writing');
    }),
  );
});
