// The PostgreSQL batch store is not waited for at start-up: until it connects every call answers UNAVAILABLE
// naming the store, it keeps trying in the background, and then calls reach the real store.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HerdError } from '../../../src/core/errors.ts';
import type { BatchStore } from '../../../src/gateway/batch/batch-store.ts';
import { DeferredBatchStore } from '../../../src/gateway/batch/deferred-batch-store.ts';

test('calls answer UNAVAILABLE until the store opens, then reach it; close stops the retries', async () => {
  let attempts = 0;
  let closed = 0;
  const real = { kind: 'postgres', getFile: async (id: string) => ({ id }), close: async () => void closed++ } as unknown as BatchStore;
  const lines: string[] = [];
  const store = new DeferredBatchStore({
    label: 'batch store postgres://db/x',
    backoff: { baseMs: 1, capMs: 2 },
    log: (line) => lines.push(line),
    open: async () => {
      attempts++;
      if (attempts < 3) throw new Error('connect ECONNREFUSED');
      return real;
    },
  });
  await store.start();
  assert.equal(store.isReady, false);
  await assert.rejects(
    store.getFile('file-1'),
    (err: unknown) => err instanceof HerdError && err.code === 'UNAVAILABLE' && /batch store postgres:\/\/db\/x is unreachable: connect ECONNREFUSED/.test(err.message),
  );
  for (let i = 0; i < 500 && !store.isReady; i++) await new Promise((r) => setTimeout(r, 2));
  assert.equal(store.isReady, true);
  assert.deepEqual(await store.getFile('file-1'), { id: 'file-1' });
  assert.ok(lines.some((l) => l.includes('is unreachable (connect ECONNREFUSED); retrying')));
  assert.ok(lines.includes('batch store postgres://db/x reached'));
  await store.close();
  assert.equal(closed, 1);
});
