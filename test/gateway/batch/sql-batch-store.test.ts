// The batch store on SQLite (a temp file) and PostgreSQL (a schema of its own, dropped after; skipped without
// DATABASE_URL): files and their pages, batches and guarded status changes, lines and leases taken over at expiry.
import assert from 'node:assert/strict';
import { bothEngines as bothEnginesWith } from './both-engines.ts';
import type { Batch, BatchFile, BatchLine, BatchStore, UpstreamBatchRow } from '../../../src/gateway/batch/batch-store.ts';

const bothEngines = (name: string, body: (store: BatchStore) => Promise<void>) => bothEnginesWith(name, body, { withLedger: true });

const file = (id: string, keyId: string, createdAt: number, extra: Partial<BatchFile> = {}): BatchFile => ({
  id,
  keyId,
  purpose: 'batch',
  filename: `${id}.jsonl`,
  bytes: 100,
  lines: 2,
  createdAt,
  expiresAt: undefined,
  deletedAt: undefined,
  storageRef: `ref-${id}`,
  ...extra,
});

const batch = (id: string, keyId: string, createdAt: number): Batch => ({
  id,
  dialect: 'openai',
  keyId,
  teamId: undefined,
  endpoint: '/v1/chat/completions',
  inputFileId: 'file-a',
  status: 'validating',
  completionWindowMs: 86_400_000,
  createdAt,
  expiresAt: createdAt + 86_400_000,
  inProgressAt: undefined,
  finalizingAt: undefined,
  completedAt: undefined,
  cancellingAt: undefined,
  cancelledAt: undefined,
  failedAt: undefined,
  expiredAt: undefined,
  metadata: { job: 'nightly' },
  total: 3,
  completed: 0,
  failed: 0,
  outputFileId: undefined,
  errorFileId: undefined,
  reservedMicros: 1_500_000,
  currency: 'USD',
  errors: undefined,
});

const line = (batchId: string, lineNo: number): BatchLine => ({
  batchId,
  lineNo,
  customId: `req-${lineNo}`,
  requestId: `${batchId}-${lineNo}`,
  bodyOffset: lineNo * 100,
  bodyLength: 99,
  model: undefined,
  deployment: undefined,
  state: 'pending',
  upstreamBatchId: undefined,
  leaseOwner: undefined,
  leaseUntil: undefined,
  attempts: 0,
  resultRef: undefined,
  statusCode: undefined,
  queuedAt: undefined,
  result: undefined,
});

bothEngines('files: stored, read back with their numbers, paged by cursor in both orders, deleted once', async (store) => {
  const now = 1_800_000_000_000;
  for (let i = 1; i <= 5; i++) await store.insertFile(file(`file-${i}`, i % 2 === 0 ? 'hk_b' : 'hk_a', now + i * 1000));
  await store.insertFile(file('file-old', 'hk_a', now, { expiresAt: now + 10 }));
  assert.deepEqual(await store.getFile('file-2'), file('file-2', 'hk_b', now + 2000));
  assert.equal(await store.getFile('file-none'), undefined);

  const first = await store.listFiles({ keyId: undefined, purpose: 'batch', after: undefined, limit: 2, order: 'desc', now: now + 100 });
  assert.deepEqual(
    first.items.map((f) => f.id),
    ['file-5', 'file-4'],
  );
  assert.equal(first.hasMore, true);
  const rest = await store.listFiles({ keyId: undefined, purpose: undefined, after: 'file-4', limit: 10, order: 'desc', now: now + 100 });
  assert.deepEqual(
    rest.items.map((f) => f.id),
    ['file-3', 'file-2', 'file-1'],
    'the expired file is not listed',
  );
  assert.equal(rest.hasMore, false);
  const mine = await store.listFiles({ keyId: 'hk_a', purpose: undefined, after: 'file-1', limit: 10, order: 'asc', now: now + 100 });
  assert.deepEqual(
    mine.items.map((f) => f.id),
    ['file-3', 'file-5'],
  );
  assert.deepEqual((await store.listFiles({ keyId: undefined, purpose: undefined, after: 'file-unknown', limit: 10, order: 'asc', now })).items, []);

  assert.equal(await store.markFileDeleted('file-3', now + 9), true);
  assert.equal(await store.markFileDeleted('file-3', now + 10), false);
  assert.equal((await store.getFile('file-3'))?.deletedAt, now + 9);
  const after = await store.listFiles({ keyId: 'hk_a', purpose: 'batch', after: undefined, limit: 10, order: 'asc', now: now + 100 });
  assert.deepEqual(
    after.items.map((f) => f.id),
    ['file-1', 'file-5'],
  );
});

bothEngines('batches: metadata and errors round-trip as JSON; a status change guarded by the current status', async (store) => {
  const now = 1_800_000_000_000;
  await store.insertBatch(batch('batch_1', 'hk_a', now));
  await store.insertBatch(batch('batch_2', 'hk_b', now + 1));
  assert.deepEqual(await store.getBatch('batch_1'), batch('batch_1', 'hk_a', now));
  assert.equal(await store.updateBatch('batch_1', { status: 'in_progress', inProgressAt: now + 5 }, ['validating']), true);
  assert.equal(await store.updateBatch('batch_1', { status: 'in_progress' }, ['validating']), false, 'no longer validating');
  assert.equal(await store.updateBatch('batch_1', { errors: { object: 'list', data: [{ line: 2, message: 'bad' }] }, completed: 2 }), true);
  const read = await store.getBatch('batch_1');
  assert.equal(read?.status, 'in_progress');
  assert.equal(read?.inProgressAt, now + 5);
  assert.equal(read?.completed, 2);
  assert.deepEqual(read?.errors, { object: 'list', data: [{ line: 2, message: 'bad' }] });
  const page = await store.listBatches({ dialect: 'openai', keyId: undefined, after: undefined, limit: 1, order: 'desc' });
  assert.deepEqual(
    page.items.map((b) => b.id),
    ['batch_2'],
  );
  assert.equal(page.hasMore, true);
  assert.deepEqual((await store.listBatches({ dialect: 'anthropic', keyId: undefined, after: undefined, limit: 5, order: 'desc' })).items, []);
});

bothEngines('lines: inserted in chunks, claimed under a lease, taken over when it expires, updated only by the holder', async (store) => {
  const lines = Array.from({ length: 1203 }, (_, i) => line('batch_1', i + 1));
  await store.insertLines(lines);
  assert.deepEqual(await store.countLines('batch_1'), { pending: 1203 });
  assert.deepEqual(
    (await store.listLines('batch_1', 1202, 10)).map((l) => l.lineNo),
    [1202, 1203],
  );

  const now = 1_800_000_000_000;
  const a = await store.claimLines({ owner: 'replica-a', states: ['pending'], now, leaseMs: 1000, limit: 3 });
  assert.deepEqual(
    a.map((l) => [l.lineNo, l.leaseOwner, l.leaseUntil, l.attempts]),
    [
      [1, 'replica-a', now + 1000, 1],
      [2, 'replica-a', now + 1000, 1],
      [3, 'replica-a', now + 1000, 1],
    ],
  );
  const b = await store.claimLines({ owner: 'replica-b', states: ['pending'], now: now + 10, leaseMs: 1000, limit: 2 });
  assert.deepEqual(
    b.map((l) => l.lineNo),
    [4, 5],
    'leased lines are skipped',
  );
  assert.equal(await store.updateLine('batch_1', 1, { state: 'succeeded', statusCode: 200, resultRef: 'r1:0:10' }, 'replica-b'), false, 'not the holder');
  assert.equal(
    await store.updateLine('batch_1', 1, { state: 'succeeded', statusCode: 200, resultRef: 'r1:0:10', leaseOwner: undefined, leaseUntil: undefined }, 'replica-a'),
    true,
  );

  // replica-a dies: its other lines' leases expire and replica-b takes them.
  const takeover = await store.claimLines({ owner: 'replica-b', states: ['pending'], now: now + 1001, leaseMs: 1000, limit: 2, batchId: 'batch_1' });
  assert.deepEqual(
    takeover.map((l) => [l.lineNo, l.leaseOwner, l.attempts]),
    [
      [2, 'replica-b', 2],
      [3, 'replica-b', 2],
    ],
  );
  const done = (await store.listLines('batch_1', 1, 1))[0];
  assert.equal(done?.state, 'succeeded');
  assert.equal(done?.statusCode, 200);
  assert.equal(done?.leaseOwner, undefined);
  assert.deepEqual(await store.countLines('batch_1'), { pending: 1202, succeeded: 1 });
});

bothEngines('line results round-trip; finishLines moves only lines in the given states and drops their leases', async (store) => {
  await store.insertBatch(batch('batch_f', 'hk_a', 1000));
  await store.insertLines([1, 2, 3].map((n) => line('batch_f', n)));
  await store.claimLines({ owner: 'w1', states: ['pending'], now: 5000, leaseMs: 1000, limit: 1 });
  const answer = { outcome: 'succeeded' as const, statusCode: 200, body: { id: 'chatcmpl-1', choices: [{ text: 'ünïcode' }] } };
  assert.equal(await store.updateLine('batch_f', 1, { state: 'succeeded', statusCode: 200, result: answer }, 'w1'), true);
  assert.equal(await store.finishLines('batch_f', ['pending'], 'canceled', { outcome: 'canceled' }), 2);
  assert.equal(await store.finishLines('batch_f', ['pending'], 'canceled', { outcome: 'canceled' }), 0);
  const lines = await store.listLines('batch_f', 1, 10);
  assert.deepEqual(lines[0]?.result, answer);
  assert.deepEqual(
    lines.slice(1).map((l) => [l.state, l.result, l.leaseOwner]),
    [
      ['canceled', { outcome: 'canceled' }, undefined],
      ['canceled', { outcome: 'canceled' }, undefined],
    ],
  );
  assert.deepEqual(await store.countLines('batch_f'), { succeeded: 1, canceled: 2 });
});

bothEngines('batches by status oldest first; deleteBatch removes the batch and its lines once', async (store) => {
  await store.insertBatch({ ...batch('batch_new', 'hk_a', 3000), status: 'in_progress' });
  await store.insertBatch({ ...batch('batch_old', 'hk_b', 1000), status: 'cancelling' });
  await store.insertBatch({ ...batch('batch_done', 'hk_a', 2000), status: 'completed' });
  await store.insertLines([line('batch_old', 1)]);
  assert.deepEqual(
    (await store.listBatchesByStatus(['in_progress', 'cancelling'], 10)).map((b) => b.id),
    ['batch_old', 'batch_new'],
  );
  assert.deepEqual(await store.listBatchesByStatus([], 10), []);
  assert.equal(await store.deleteBatch('batch_old'), true);
  assert.equal(await store.deleteBatch('batch_old'), false);
  assert.equal(await store.getBatch('batch_old'), undefined);
  assert.deepEqual(await store.listLines('batch_old', 1, 10), []);
});

bothEngines('upstream batches: queued lines per deployment, packed once, claimed when due, leased, found by request id', async (store) => {
  await store.insertBatch(batch('batch_a', 'hk_a', 1000));
  await store.insertBatch(batch('batch_b', 'hk_b', 1000));
  await store.insertLines([1, 2, 3].map((n) => line('batch_a', n)));
  await store.insertLines([1, 2].map((n) => line('batch_b', n)));
  const queue = (batchId: string, lineNo: number, deployment: string, at: number) => store.updateLine(batchId, lineNo, { state: 'queued_upstream', deployment, queuedAt: at });
  await queue('batch_a', 1, 'openai/gpt-4o', 200);
  await queue('batch_a', 2, 'openai/gpt-4o', 300);
  await queue('batch_b', 1, 'openai/gpt-4o', 100);
  await queue('batch_b', 2, 'anthropic/claude', 400);
  assert.deepEqual(await store.listQueuedDeployments(), [
    { deployment: 'openai/gpt-4o', lines: 3, oldestQueuedAt: 100 },
    { deployment: 'anthropic/claude', lines: 1, oldestQueuedAt: 400 },
  ]);
  const queued = await store.listQueuedLines('openai/gpt-4o', 10);
  assert.deepEqual(
    queued.map((l) => [l.batchId, l.lineNo]),
    [
      ['batch_b', 1],
      ['batch_a', 1],
      ['batch_a', 2],
    ],
  );
  const row = upstream('ubatch_1', 5000);
  // A line not queued (batch_a 3 is pending) is not taken.
  assert.equal(await store.insertUpstreamBatch(row, [...queued, { batchId: 'batch_a', lineNo: 3 }]), 3);
  assert.equal((await store.getUpstreamBatch('ubatch_1'))?.lines, 3);
  assert.equal(await store.insertUpstreamBatch(upstream('ubatch_2', 5000), queued), 0, 'lines already packed are not packed twice');
  assert.deepEqual(await store.listQueuedDeployments(), [{ deployment: 'anthropic/claude', lines: 1, oldestQueuedAt: 400 }]);

  const inBatch = await store.listUpstreamLines('ubatch_1', undefined, 2);
  assert.equal(inBatch.length, 2);
  const rest = await store.listUpstreamLines('ubatch_1', inBatch[1]?.requestId, 10);
  assert.equal(rest.length, 1);
  assert.ok((inBatch[0]?.requestId ?? '') < (inBatch[1]?.requestId ?? '') && (inBatch[1]?.requestId ?? '') < (rest[0]?.requestId ?? ''));
  assert.equal((await store.getLineByRequestId('batch_b-1'))?.upstreamBatchId, 'ubatch_1');
  assert.equal(await store.getLineByRequestId('nope'), undefined);

  // Due: next_poll_at unset or come; lease free or expired.
  assert.equal(await store.updateUpstreamBatch('ubatch_1', { state: 'running', providerBatchId: 'batch_up1', nextPollAt: 6000 }), true);
  assert.deepEqual(await store.claimUpstreamBatches({ owner: 'w1', states: ['running'], now: 5500, leaseMs: 1000, limit: 5 }), []);
  const claimed = await store.claimUpstreamBatches({ owner: 'w1', states: ['running'], now: 6000, leaseMs: 1000, limit: 5 });
  assert.deepEqual(
    claimed.map((u) => [u.id, u.leaseOwner, u.leaseUntil, u.providerBatchId]),
    [['ubatch_1', 'w1', 7000, 'batch_up1']],
  );
  assert.deepEqual(await store.claimUpstreamBatches({ owner: 'w2', states: ['running'], now: 6500, leaseMs: 1000, limit: 5 }), []);
  assert.equal(await store.updateUpstreamBatch('ubatch_1', { pollAttempts: 1 }, 'w2'), false, 'only the lease holder');
  const taken = await store.claimUpstreamBatches({ owner: 'w2', states: ['running'], now: 7001, leaseMs: 1000, limit: 5 });
  assert.equal(taken[0]?.leaseOwner, 'w2');
  assert.equal(await store.updateUpstreamBatch('ubatch_1', { state: 'done', pollAttempts: 2, leaseOwner: undefined, leaseUntil: undefined }, 'w2'), true);
  const done = await store.getUpstreamBatch('ubatch_1');
  assert.deepEqual([done?.state, done?.pollAttempts, done?.leaseOwner], ['done', 2, undefined]);
});

bothEngines('near the deadline: unsent queued lines go back to pending or expire, packed ones stay', async (store) => {
  await store.insertBatch({ ...batch('batch_d', 'hk_a', 1000), status: 'in_progress' });
  await store.insertLines([1, 2, 3, 4].map((n) => line('batch_d', n)));
  for (const n of [1, 2, 3]) await store.updateLine('batch_d', n, { state: 'queued_upstream', deployment: 'openai/gpt-4o', queuedAt: 100 + n });
  assert.equal(await store.insertUpstreamBatch(upstream('ubatch_d', 2000), [{ batchId: 'batch_d', lineNo: 1 }]), 1);
  assert.equal(await store.returnUnsentLines('batch_d'), 2);
  const lines = await store.listLines('batch_d', 1, 10);
  assert.deepEqual(
    lines.map((l) => [l.state, l.deployment, l.queuedAt]),
    [
      ['queued_upstream', 'openai/gpt-4o', 101],
      ['pending', undefined, undefined],
      ['pending', undefined, undefined],
      ['pending', undefined, undefined],
    ],
  );
  await store.updateLine('batch_d', 2, { state: 'queued_upstream', deployment: 'openai/gpt-4o', queuedAt: 300 });
  assert.equal(await store.finishLines('batch_d', ['queued_upstream'], 'expired', { outcome: 'expired' }, { unsentOnly: true }), 1);
  assert.deepEqual(await store.countLines('batch_d'), { queued_upstream: 1, expired: 1, pending: 2 });
});

bothEngines('a failed upstream batch: its queued lines back to pending, those claimed too often errored, finished lines untouched', async (store) => {
  await store.insertBatch(batch('batch_r', 'hk_a', 1000));
  await store.insertLines([1, 2, 3, 4].map((n) => line('batch_r', n)));
  await store.claimLines({ owner: 'w1', states: ['pending'], now: 2000, leaseMs: 10, limit: 4 });
  await store.claimLines({ owner: 'w1', states: ['pending'], now: 3000, leaseMs: 10, limit: 1 });
  for (const n of [1, 2, 3, 4])
    await store.updateLine('batch_r', n, { state: 'queued_upstream', deployment: 'openai/gpt-4o', queuedAt: 4000, leaseOwner: undefined, leaseUntil: undefined });
  assert.equal(
    await store.insertUpstreamBatch(
      upstream('ubatch_r', 5000),
      [1, 2, 3, 4].map((n) => ({ batchId: 'batch_r', lineNo: n })),
    ),
    4,
  );
  await store.updateLine('batch_r', 4, { state: 'canceled', result: { outcome: 'canceled' } });
  const failed = { outcome: 'errored' as const, statusCode: 500, body: { error: { message: 'the upstream batch failed' } } };
  // Line 1 was claimed twice (attempts 2), lines 2 and 3 once.
  assert.deepEqual(await store.requeueUpstreamLines('ubatch_r', 2, failed), { requeued: 2, errored: 1 });
  const lines = await store.listLines('batch_r', 1, 10);
  assert.deepEqual(
    lines.map((l) => [l.lineNo, l.state, l.deployment, l.upstreamBatchId, l.queuedAt, l.statusCode]),
    [
      [1, 'errored', 'openai/gpt-4o', 'ubatch_r', 4000, 500],
      [2, 'pending', undefined, undefined, undefined, undefined],
      [3, 'pending', undefined, undefined, undefined, undefined],
      [4, 'canceled', 'openai/gpt-4o', 'ubatch_r', 4000, undefined],
    ],
  );
  assert.deepEqual(lines[0]?.result, failed);
  assert.deepEqual(await store.requeueUpstreamLines('ubatch_r', 2, failed), { requeued: 0, errored: 0 }, 'nothing is left queued in it');
});

const upstream = (id: string, createdAt: number): UpstreamBatchRow => ({
  id,
  deployment: 'openai/gpt-4o',
  provider: 'openai',
  endpoint: '/v1/chat/completions',
  providerBatchId: undefined,
  state: 'creating',
  lines: 0,
  createdAt,
  submittedAt: undefined,
  nextPollAt: undefined,
  pollAttempts: 0,
  leaseOwner: undefined,
  leaseUntil: undefined,
  inputFileRef: undefined,
  outputFileRef: undefined,
});
