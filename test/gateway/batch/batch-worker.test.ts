// The batch worker without HTTP: batches submitted through the service on a real SQLite store and file folder,
// lines run by a scripted realtime runner, then ended: output and error files in OpenAI's shapes and line order,
// cancel, deadlines, a revoked owner, a dead replica's lease taken over, lines routed to an upstream batch.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { HerdError } from '../../../src/core/errors.ts';
import { BatchService } from '../../../src/gateway/batch/batch-service.ts';
import type { BatchStore, LineResult } from '../../../src/gateway/batch/batch-store.ts';
import { BatchWorker, type BatchWorkerDeps } from '../../../src/gateway/batch/batch-worker.ts';
import type { RunLineRealtime, UpstreamBatching } from '../../../src/gateway/batch/batch-worker-ports.ts';
import { DirectoryFileStore } from '../../../src/gateway/batch/directory-file-store.ts';
import { FileService } from '../../../src/gateway/batch/file-service.ts';
import { openBatchStore } from '../../../src/gateway/batch/open-batch-store.ts';
import type { KeyInfo } from '../../../src/gateway/keys/key-store.ts';
import { mapErrorToOpenAI } from '../../../src/http/map-openai-error.ts';
import { chatBody, DECODERS, type Fixture, key, openaiLine, openFixture } from './batch-validate-fixtures.ts';

const HOUR = 3_600_000;
const CONFIG: BatchWorkerDeps['config'] = {
  worker: { enabled: true, interval_ms: 10, lease_ms: 60_000, claim_lines: 256 },
  realtime: { concurrency: 2 },
  deadline: { policy: 'expire', margin_ms: HOUR },
};

describe('BatchWorker', () => {
  let dir: string;
  let fixture: Fixture;
  let store: BatchStore;
  let fileStore: DirectoryFileStore;
  let files: FileService;
  let service: BatchService;
  let now = Date.parse('2026-12-01T00:00:00Z');
  const owners = new Map<string, KeyInfo | HerdError>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herd-batch-worker-'));
    fixture = await openFixture();
    store = await openBatchStore(`sqlite:${join(dir, 'herd.db')}`);
    fileStore = new DirectoryFileStore(join(dir, 'files'));
    files = new FileService({ store, files: fileStore, maxBytes: 1 << 24, maxLines: 1000, ttlMs: 30 * 24 * HOUR, now: () => now });
    service = new BatchService({
      store,
      fileStore,
      files,
      catalog: fixture.catalog,
      decoders: DECODERS,
      billing: fixture.billing,
      maxLines: 1000,
      maxLineBytes: 1 << 20,
      reservationMarginMs: HOUR,
      now: () => now,
      inlineLimits: { maxBytes: 1 << 24, maxLines: Number.MAX_SAFE_INTEGER },
    });
  });
  after(async () => {
    await store.close();
    await fixture.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const worker = (runRealtime: RunLineRealtime, extra: Partial<BatchWorkerDeps> = {}) =>
    new BatchWorker({
      store,
      fileStore,
      files,
      catalog: fixture.catalog,
      keyOf: (id) => {
        const found = owners.get(id) ?? key({ id });
        return found instanceof HerdError ? found : { key: found };
      },
      runRealtime,
      encodeError: (_endpoint, error) => {
        const mapped = mapErrorToOpenAI(error);
        return { statusCode: mapped.status, body: mapped.body as unknown as { error: { message: string } } };
      },
      upstream: undefined,
      ledger: fixture.billing.ledger,
      config: CONFIG,
      owner: 'worker-a',
      now: () => now,
      log: () => undefined,
      ...extra,
    });
  /** Runs passes (and the lines they start) until one finds nothing to do. */
  const drain = async (w: BatchWorker) => {
    for (let i = 0; i < 50; i++) {
      const worked = await w.runOnce();
      await w.idle();
      if (!worked) return;
    }
  };
  const submit = async (owner: KeyInfo, lines: string[]) => {
    const file = await files.register(owner, await files.storeBytes(Readable.from([Buffer.from(`${lines.join('\n')}\n`)])), 'in.jsonl', new Map([['purpose', 'batch']]));
    return service.createOpenAI(owner, { inputFileId: file.id, endpoint: '/v1/chat/completions', completionWindow: '24h', metadata: undefined });
  };
  const contentOf = async (owner: KeyInfo, fileId: string | undefined) => {
    assert.ok(fileId, 'the file exists');
    const { stream } = await files.content(owner, fileId);
    let text = '';
    for await (const piece of stream) text += String(piece);
    return text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number; body: Record<string, unknown> } | null; error: { code: string } | null });
  };
  const echo: RunLineRealtime = async ({ line, body }) => {
    const content = (body['messages'] as { content: string }[])[0]?.content ?? '';
    if (content === 'fail') return { outcome: 'errored', statusCode: 400, body: { error: { message: 'refused upstream' } } };
    return { outcome: 'succeeded', statusCode: 200, body: { id: `chatcmpl-${line.lineNo}`, echo: content } };
  };

  it('runs every line once and ends the batch: answers in the output file, failures in the error file, both in line order', async () => {
    const owner = key({ id: 'hk_one' });
    const created = await submit(
      owner,
      ['a', 'b', 'fail', 'd', 'e'].map((c, i) => openaiLine(`req-${i + 1}`, chatBody(c))),
    );
    assert.equal(created.batch.status, 'in_progress');
    const seen: string[] = [];
    await drain(
      worker(async (run) => {
        seen.push(run.line.customId);
        return echo(run);
      }),
    );
    assert.deepEqual(seen.sort(), ['req-1', 'req-2', 'req-3', 'req-4', 'req-5']);
    const ended = await service.get(owner, 'openai', created.batch.id);
    assert.equal(ended.batch.status, 'completed');
    assert.deepEqual([ended.batch.completed, ended.batch.failed], [4, 1]);
    const output = await contentOf(owner, ended.batch.outputFileId);
    assert.deepEqual(
      output.map((l) => [l.custom_id, l.response?.status_code, l.response?.body['echo']]),
      [
        ['req-1', 200, 'a'],
        ['req-2', 200, 'b'],
        ['req-4', 200, 'd'],
        ['req-5', 200, 'e'],
      ],
    );
    const errors = await contentOf(owner, ended.batch.errorFileId);
    assert.deepEqual(
      errors.map((l) => [l.custom_id, l.response?.status_code]),
      [['req-3', 400]],
    );
  });

  it('cancel: lines not started are cancelled at once, a running line finishes, then the batch is cancelled', async () => {
    const owner = key({ id: 'hk_cancel' });
    const created = await submit(
      owner,
      ['a', 'b', 'c', 'd'].map((c, i) => openaiLine(`c-${i + 1}`, chatBody(c))),
    );
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const w = worker(
      async (run) => {
        await gate;
        return echo(run);
      },
      { config: { ...CONFIG, realtime: { concurrency: 1 } } },
    );
    assert.equal(await w.runOnce(), true);
    const cancelling = await service.cancel(owner, 'openai', created.batch.id);
    assert.equal(cancelling.batch.status, 'cancelling');
    release();
    await w.idle();
    await drain(w);
    const ended = await service.get(owner, 'openai', created.batch.id);
    assert.equal(ended.batch.status, 'cancelled');
    assert.deepEqual(ended.counts, { succeeded: 2, canceled: 2 }, 'the two lines running when cancel came finished');
    const errors = await contentOf(owner, ended.batch.errorFileId);
    assert.deepEqual(
      errors.map((l) => [l.custom_id, l.response, l.error?.code]),
      [
        ['c-3', null, 'batch_cancelled'],
        ['c-4', null, 'batch_cancelled'],
      ],
    );
  });

  it('deadline: inside the margin lines not run expire and the batch ends expired (policy expire); past expires_at every open line expires', async () => {
    const owner = key({ id: 'hk_late' });
    const created = await submit(owner, [openaiLine('x', chatBody('a')), openaiLine('y', chatBody('b'))]);
    const start = now;
    now = created.batch.expiresAt - HOUR / 2;
    await drain(worker(echo));
    const late = await service.get(owner, 'openai', created.batch.id);
    assert.deepEqual([late.batch.status, late.counts], ['expired', { expired: 2 }]);
    assert.deepEqual(
      (await contentOf(owner, late.batch.errorFileId)).map((l) => l.error?.code),
      ['batch_expired', 'batch_expired'],
    );

    now = start;
    const other = await submit(owner, [openaiLine('z', chatBody('a'))]);
    now = other.batch.expiresAt + 1;
    await drain(worker(echo, { config: { ...CONFIG, deadline: { policy: 'realtime', margin_ms: HOUR } } }));
    assert.equal((await service.get(owner, 'openai', other.batch.id)).batch.status, 'expired');
    now = start;
  });

  it("a line whose owner's key was revoked since submission is not run: errored with the key's refusal", async () => {
    const owner = key({ id: 'hk_revoked' });
    const created = await submit(owner, [openaiLine('r', chatBody('a'))]);
    owners.set(owner.id, new HerdError('UNAUTHENTICATED', 'key hk_revoked was revoked', { reason: 'key_revoked' }));
    let ran = 0;
    await drain(
      worker(async (run) => {
        ran += 1;
        return echo(run);
      }),
    );
    assert.equal(ran, 0);
    const ended = await service.get(owner, 'openai', created.batch.id);
    const errors = await contentOf(owner, ended.batch.errorFileId);
    assert.deepEqual(
      errors.map((l) => l.response?.status_code),
      [401],
    );
  });

  it('a replica that died mid-line: its lease expires and another replica runs the line (same request id)', async () => {
    const owner = key({ id: 'hk_takeover' });
    const created = await submit(owner, [openaiLine('t', chatBody('a'))]);
    const dead = worker(() => new Promise<LineResult>(() => undefined), { owner: 'worker-dead' });
    await dead.runOnce();
    const [stuck] = await store.listLines(created.batch.id, 1, 1);
    assert.deepEqual([stuck?.state, stuck?.leaseOwner], ['running', 'worker-dead']);
    const ids: string[] = [];
    const live = worker(
      async (run) => {
        ids.push(run.line.requestId);
        return echo(run);
      },
      { owner: 'worker-b' },
    );
    await drain(live);
    assert.deepEqual(ids, [], 'not before the lease expires');
    now += CONFIG.worker.lease_ms + 1;
    await drain(live);
    assert.deepEqual(ids, [stuck?.requestId]);
    assert.equal((await service.get(owner, 'openai', created.batch.id)).batch.status, 'completed');
    now -= CONFIG.worker.lease_ms + 1;
  });

  it('a live replica keeps the lines it runs: each pass renews their leases, so another replica does not run them twice', async () => {
    const owner = key({ id: 'hk_renew' });
    const created = await submit(owner, [openaiLine('slow', chatBody('a'))]);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = worker(async (run) => {
      await gate;
      return echo(run);
    });
    await slow.runOnce();
    const start = now;
    now += CONFIG.worker.lease_ms - 1;
    await slow.runOnce();
    now += 2;
    let ranElsewhere = 0;
    await worker(
      async (run) => {
        ranElsewhere += 1;
        return echo(run);
      },
      { owner: 'worker-other' },
    ).runOnce();
    assert.equal(ranElsewhere, 0, 'the renewed lease still holds');
    release();
    await slow.idle();
    await drain(slow);
    assert.equal((await service.get(owner, 'openai', created.batch.id)).batch.status, 'completed');
    now = start;
  });

  it('lines whose model has a deployment with a batch API are queued for the upstream half, not run', async () => {
    const owner = key({ id: 'hk_up' });
    const created = await submit(owner, [openaiLine('u1', chatBody('a')), openaiLine('u2', chatBody('b', 'claude-sonnet-4.5'))]);
    const ticks: number[] = [];
    const upstream: UpstreamBatching = {
      accepts: (deployment, endpoint) => endpoint === '/v1/chat/completions' && deployment.model === 'gpt-4.1',
      tick: async (at) => void ticks.push(at),
      cancelFor: async () => undefined,
    };
    const ran: string[] = [];
    await drain(
      worker(
        async (run) => {
          ran.push(run.line.customId);
          return echo(run);
        },
        { upstream },
      ),
    );
    assert.deepEqual(ran, ['u2']);
    const lines = await store.listLines(created.batch.id, 1, 10);
    assert.deepEqual(
      lines.map((l) => [l.customId, l.state, l.deployment]),
      [
        ['u1', 'queued_upstream', 'relay/gpt-4.1'],
        ['u2', 'succeeded', undefined],
      ],
    );
    assert.ok(ticks.length > 0, 'the upstream half is ticked every pass');
    assert.equal((await service.get(owner, 'openai', created.batch.id)).batch.status, 'in_progress', 'the queued line is still open');
  });
  it("with an upstream half that takes none of the endpoint's deployments, a pass claims only the free realtime slots (nothing handed back)", async () => {
    const owner = key({ id: 'hk_slots' });
    const created = await submit(
      owner,
      Array.from({ length: 10 }, (_, i) => openaiLine(`s${i}`, chatBody(String(i)))),
    );
    const limits: number[] = [];
    const handedBack: number[] = [];
    // Object.create keeps the store's own methods and state; only the two calls are counted.
    const counted: BatchStore = Object.assign(Object.create(store) as BatchStore, {
      claimLines: (claim: Parameters<BatchStore['claimLines']>[0]) => {
        limits.push(claim.limit);
        return store.claimLines(claim);
      },
      updateLine: (...args: Parameters<BatchStore['updateLine']>) => {
        if (args[2].state === 'pending') handedBack.push(args[1]);
        return store.updateLine(...args);
      },
    });
    const upstream: UpstreamBatching = { accepts: () => false, tick: async () => undefined, cancelFor: async () => undefined };
    await drain(worker(echo, { store: counted, upstream }));
    assert.equal((await service.get(owner, 'openai', created.batch.id)).batch.status, 'completed');
    assert.ok(limits.length > 0 && limits.every((n) => n <= CONFIG.realtime.concurrency * 2), `claim limits: ${limits.join(', ')}`);
    assert.deepEqual(handedBack, []);
  });
});
