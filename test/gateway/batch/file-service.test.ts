// The Files API's service without HTTP: expiry (the configured lifetime and expires_after), a purpose or lifetime
// refused after the bytes were stored (they are discarded), list parameters checked as OpenAI checks them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HerdError } from '../../../src/core/errors.ts';
import type { BatchStore } from '../../../src/gateway/batch/batch-store.ts';
import { DirectoryFileStore } from '../../../src/gateway/batch/directory-file-store.ts';
import { FileService } from '../../../src/gateway/batch/file-service.ts';
import { openBatchStore } from '../../../src/gateway/batch/open-batch-store.ts';
import { createSyntheticKey } from '../../../src/gateway/keys/synthetic-key.ts';

const alice = createSyntheticKey({ id: 'hk_alice', name: 'alice' });
const bytes = (text: string) => Readable.from([Buffer.from(text)]);
const isHerd = (code: string, param?: string) => (err: unknown) => err instanceof HerdError && err.code === code && (param === undefined || err.param === param);

describe('FileService', () => {
  let dir: string;
  let store: BatchStore;
  let service: FileService;
  let now = 1_800_000_000_000;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herd-file-service-'));
    store = await openBatchStore(`sqlite:${join(dir, 'herd.db')}`);
    service = new FileService({ store, files: new DirectoryFileStore(join(dir, 'files')), maxBytes: 1 << 20, maxLines: 10, ttlMs: 86_400_000, now: () => now });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a file expires after the configured lifetime or its expires_after, then is gone for its owner too', async () => {
    const plain = await service.register(alice, await service.storeBytes(bytes('{}\n')), 'a.jsonl', new Map([['purpose', 'batch']]));
    assert.equal(plain.expires_at, (now + 86_400_000) / 1000);
    const short = await service.register(
      alice,
      await service.storeBytes(bytes('{}\n')),
      'dir/b.jsonl',
      new Map([
        ['purpose', 'batch'],
        ['expires_after[anchor]', 'created_at'],
        ['expires_after[seconds]', '3600'],
      ]),
    );
    assert.equal(short.filename, 'b.jsonl', 'no path from the client is kept');
    now += 3600_000;
    await assert.rejects(service.retrieve(alice, short.id), isHerd('NOT_FOUND', 'id'));
    assert.deepEqual(
      (await service.list(alice, {})).data.map((f) => f.id),
      [plain.id],
    );
  });

  it('refusals after the bytes were stored discard them', async () => {
    const folder = join(dir, 'files');
    const count = () => readdirSync(folder).filter((n) => !n.startsWith('.')).length;
    const before = count();
    await assert.rejects(service.register(alice, await service.storeBytes(bytes('{}\n')), 'x', new Map([['purpose', 'assistants']])), isHerd('INVALID_ARG', 'purpose'));
    await assert.rejects(service.register(alice, await service.storeBytes(bytes('{}\n')), 'x', new Map()), isHerd('INVALID_ARG', 'purpose'));
    await assert.rejects(
      service.register(
        alice,
        await service.storeBytes(bytes('{}\n')),
        'x',
        new Map([
          ['purpose', 'batch'],
          ['expires_after[anchor]', 'created_at'],
          ['expires_after[seconds]', '60'],
        ]),
      ),
      isHerd('INVALID_ARG', 'expires_after.seconds'),
    );
    assert.equal(count(), before);
  });

  it('checks list parameters as OpenAI does: limit 1 to 10,000, order asc or desc, a known purpose', async () => {
    await assert.rejects(service.list(alice, { limit: '0' }), isHerd('INVALID_ARG', 'limit'));
    await assert.rejects(service.list(alice, { limit: '10001' }), isHerd('INVALID_ARG', 'limit'));
    await assert.rejects(service.list(alice, { order: 'up' }), isHerd('INVALID_ARG', 'order'));
    await assert.rejects(service.list(alice, { purpose: 'vision' }), isHerd('INVALID_ARG', 'purpose'));
    const empty = await service.list(createSyntheticKey({ id: 'hk_bob', name: 'bob' }), { purpose: 'batch_output' });
    assert.deepEqual(empty, { object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });
});
