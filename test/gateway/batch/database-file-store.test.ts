// batch.files.store: database on both engines: bytes streamed in as chunks come back whole and by any range (across
// chunk boundaries), a refused or cut-off upload leaves nothing readable, and incomplete leftovers are swept.
import assert from 'node:assert/strict';
import { HerdError } from '../../../src/core/errors.ts';
import { bothEngines } from './both-engines.ts';
import { DatabaseFileStore } from '../../../src/gateway/batch/database-file-store.ts';

const LIMITS = { maxBytes: 8 << 20, maxLines: 1_000_000 };
const MiB = 1 << 20;

/** `bytes` cut into uneven pieces, as a network delivers them. */
async function* pieces(bytes: Buffer): AsyncGenerator<Buffer> {
  for (let at = 0, n = 1; at < bytes.length; n = (n * 7919) % 300_007) {
    yield bytes.subarray(at, at + 1000 + n);
    at += 1000 + n;
  }
}

async function read(files: DatabaseFileStore, ref: string, range?: { start: number; end: number }): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of await files.open(ref, range)) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

bothEngines('a 2.5 MiB file comes back whole and by ranges across chunk boundaries; counted as it streamed', async (store) => {
  const files = new DatabaseFileStore(store.blobs);
  const lines = Array.from({ length: 30_000 }, (_, i) => `{"custom_id":"r${i}","n":${i * 31}}`);
  const bytes = Buffer.from(`${lines.join('\n')}\n${'x'.repeat(2.5 * MiB - lines.join('\n').length - 1)}`);
  const stored = await files.put(pieces(bytes), LIMITS);
  assert.deepEqual([stored.bytes, stored.lines], [bytes.length, 30_001]);
  assert.ok((await read(files, stored.ref)).equals(bytes));
  for (const [start, end] of [
    [0, 0],
    [MiB - 3, MiB + 2],
    [MiB, 2 * MiB - 1],
    [123_456, 2 * MiB + 500],
    [bytes.length - 10, bytes.length - 1],
  ] as const) {
    assert.ok((await read(files, stored.ref, { start, end })).equals(bytes.subarray(start, end + 1)), `range ${start}-${end}`);
  }
  await files.delete(stored.ref);
  await assert.rejects(files.open(stored.ref), (err: unknown) => err instanceof HerdError && err.code === 'NOT_FOUND');
});

bothEngines('a refused upload leaves nothing; an incomplete one is unreadable and swept once stale', async (store) => {
  let now = 1_800_000_000_000;
  const files = new DatabaseFileStore(store.blobs, () => now);
  await assert.rejects(
    files.put(pieces(Buffer.alloc(3 * MiB, 0x61)), { maxBytes: 2 * MiB, maxLines: 10 }),
    (err: unknown) => err instanceof HerdError && err.code === 'PAYLOAD_TOO_LARGE',
  );
  assert.deepEqual(await store.blobs.listIncomplete(now + 1), [], 'the refused upload is gone');

  await store.blobs.begin('cut-off', MiB, now);
  await store.blobs.putChunk('cut-off', 0, Buffer.from('half'));
  await assert.rejects(files.open('cut-off'), (err: unknown) => err instanceof HerdError && err.code === 'NOT_FOUND');
  now += 25 * 3600_000;
  const fresh = new DatabaseFileStore(store.blobs, () => now);
  await fresh.put(pieces(Buffer.from('{}\n')), LIMITS);
  assert.equal(await store.blobs.get('cut-off'), undefined, 'swept at the next upload');
});
