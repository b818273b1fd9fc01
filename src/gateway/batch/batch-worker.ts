// The lease loop that runs batch lines on every replica (docs/decisions/batch-design.md, "Execution"): each pass
// applies deadlines, claims lines of running batches under a lease, sends each either to an upstream batch (its
// model has a deployment whose batch API is used) or to the realtime flow at BATCH priority (bounded per replica),
// lets the upstream half pack and poll, and ends batches whose lines are all done. A replica that dies loses its
// leases at expiry and another takes its lines over; a line's request id keeps it billed once.
import { type AbortLink, LightAbortController } from '../../core/abort-link.ts';
import { HerdError, toHerdError } from '../../core/errors.ts';
import type { BatchConfig } from '../../config/batch-config-schema.ts';
import type { Ledger } from '../billing/ledger.ts';
import type { KeyInfo } from '../keys/key-store.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import type { GatewayCatalog } from '../router/gateway-catalog.ts';
import type { Batch, BatchLine, BatchStore, LineResult } from './batch-store.ts';
import type { RunLineRealtime, UpstreamBatching } from './batch-worker-ports.ts';
import type { FileService } from './file-service.ts';
import type { FileStore } from './file-store.ts';
import { allLinesEnded, finalizeBatch } from './finalize-batch.ts';
import { readLineBody } from './read-line-body.ts';

export interface BatchWorkerDeps {
  store: BatchStore;
  fileStore: FileStore;
  files: FileService;
  catalog: GatewayCatalog;
  /** The batch owner's key as it stands now, or why it may no longer be used. */
  keyOf: (keyId: string) => { key: KeyInfo } | HerdError;
  runRealtime: RunLineRealtime;
  /** The endpoint's dialect's error answer, for a line refused before it ran (its owner's key revoked). */
  encodeError: (endpoint: string, error: HerdError) => { statusCode: number; body: JsonObject };
  upstream: UpstreamBatching | undefined;
  ledger: Pick<Ledger, 'release'> | undefined;
  config: Pick<BatchConfig, 'worker' | 'realtime' | 'deadline'>;
  /** This replica's lease owner id. */
  owner: string;
  now?: () => number;
  log: (line: string) => void;
}

/** Batches looked at per pass; more wait for the next pass (oldest first). */
const BATCHES_PER_PASS = 100;

export class BatchWorker {
  private readonly now: () => number;
  private readonly stopping = new LightAbortController();
  private readonly running = new Set<Promise<void>>();
  /** The lines this replica runs now, whose leases each pass renews (a line may wait long in the BATCH admission queue). */
  private readonly held = new Map<string, { batchId: string; lineNo: number }>();
  private readonly runningByBatch = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<void> | undefined;
  /** True while waiting for the next pass (not in one): a finished realtime line then starts one at once. */
  private sleeping = false;
  private lastFailure: string | undefined;

  constructor(private readonly deps: BatchWorkerDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Runs passes until stop(): at once while there is work, else every worker.interval_ms. */
  start(): void {
    this.schedule(0);
  }

  /** Stops claiming; waits for the pass and the realtime lines in flight (their leases would otherwise wait to expire). */
  async stop(): Promise<void> {
    this.stopping.abort(new HerdError('CANCELLED', 'the batch worker is stopping'));
    if (this.timer) clearTimeout(this.timer);
    await this.pass;
    await Promise.allSettled([...this.running]);
  }

  /** One pass; true when it found work. Tests drive the worker with it. */
  async runOnce(): Promise<boolean> {
    const signal = this.stopping.signal;
    const now = this.now();
    let worked = false;
    await this.renewLeases(now);
    const batches = await this.deps.store.listBatchesByStatus(['in_progress', 'cancelling', 'finalizing'], BATCHES_PER_PASS);
    for (const batch of batches) {
      if (signal.aborted) return worked;
      try {
        worked = (await this.work(batch, now, signal)) || worked;
      } catch (err) {
        this.deps.log(`batch ${batch.id}: ${toHerdError(err).message}`);
      }
    }
    if (this.deps.upstream !== undefined && !signal.aborted) await this.deps.upstream.tick(now, signal);
    return worked;
  }

  /** Waits for the realtime lines started so far (tests). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private schedule(delayMs: number): void {
    if (this.stopping.signal.aborted) return;
    this.sleeping = true;
    this.timer = setTimeout(() => {
      this.sleeping = false;
      this.pass = this.runOnce()
        .then((worked) => {
          this.lastFailure = undefined;
          return worked;
        })
        .catch((err: unknown) => {
          // A database that is away fails every pass the same way: said once, and again when it changes.
          const message = toHerdError(err).message;
          if (message !== this.lastFailure) this.deps.log(`batch worker: ${message}`);
          this.lastFailure = message;
          return false;
        })
        .then((worked) => this.schedule(worked ? 0 : this.deps.config.worker.interval_ms));
    }, delayMs);
    this.timer.unref();
  }

  private async work(batch: Batch, now: number, signal: AbortLink): Promise<boolean> {
    if (batch.status === 'finalizing') {
      // A replica died while writing the files: another ends it once the lease time has passed.
      if ((batch.finalizingAt ?? 0) + this.deps.config.worker.lease_ms > now) return false;
      return this.finishIfDone(batch);
    }
    if (batch.status === 'in_progress') {
      await this.applyDeadline(batch, now);
      const claimed = await this.claim(batch, now);
      if (claimed.length > 0) {
        await this.plan(batch, claimed, now, signal);
        return true;
      }
    }
    return this.finishIfDone(batch);
  }

  private async finishIfDone(batch: Batch): Promise<boolean> {
    // Lines of it still run here, so it is not done: counting its lines (an index scan of the whole batch) can wait.
    if ((this.runningByBatch.get(batch.id) ?? 0) > 0) return false;
    const counts = await this.deps.store.countLines(batch.id);
    if (!allLinesEnded(counts)) return false;
    return finalizeBatch({ store: this.deps.store, files: this.deps.files, ledger: this.deps.ledger, now: this.now, log: this.deps.log }, batch, counts);
  }

  /**
   * Inside deadline.margin_ms of expires_at no line goes upstream any more (unsent queued ones come back), and
   * with policy `expire` the lines not yet run expire; at expires_at every line still open expires.
   */
  private async applyDeadline(batch: Batch, now: number): Promise<void> {
    const { policy, margin_ms } = this.deps.config.deadline;
    if (now >= batch.expiresAt) {
      await this.deps.store.finishLines(batch.id, ['pending', 'queued_upstream', 'running'], 'expired', { outcome: 'expired' });
      return;
    }
    if (now < batch.expiresAt - margin_ms) return;
    await this.deps.store.returnUnsentLines(batch.id);
    if (policy === 'expire') await this.deps.store.finishLines(batch.id, ['pending'], 'expired', { outcome: 'expired' });
  }

  /**
   * As many lines as can be placed now: the claim size when lines of the endpoint may go upstream, else the free realtime
   * slots (each claimed line without a slot is handed back by one write of its own).
   */
  private async claim(batch: Batch, now: number): Promise<BatchLine[]> {
    const { worker, realtime } = this.deps.config;
    const free = realtime.concurrency * 2 - this.running.size;
    const limit = this.mayGoUpstream(batch.endpoint) ? worker.claim_lines : free;
    if (limit <= 0) return [];
    return this.deps.store.claimLines({ owner: this.deps.owner, states: ['pending', 'running'], now, leaseMs: worker.lease_ms, limit, batchId: batch.id });
  }

  private async plan(batch: Batch, lines: readonly BatchLine[], now: number, signal: AbortLink): Promise<void> {
    const owner = this.deps.keyOf(batch.keyId);
    const nearDeadline = now >= batch.expiresAt - this.deps.config.deadline.margin_ms;
    let slots = this.deps.config.realtime.concurrency * 2 - this.running.size;
    for (const line of lines) {
      if (owner instanceof HerdError) {
        await this.end(batch, line, { outcome: 'errored', ...this.deps.encodeError(batch.endpoint, owner) });
        continue;
      }
      const deployment = nearDeadline ? undefined : this.upstreamDeployment(batch, line);
      if (deployment !== undefined) {
        const queued = { state: 'queued_upstream', deployment, queuedAt: now, leaseOwner: undefined, leaseUntil: undefined } as const;
        await this.deps.store.updateLine(batch.id, line.lineNo, queued, this.deps.owner);
      } else if (slots > 0) {
        slots -= 1;
        await this.deps.store.updateLine(batch.id, line.lineNo, { state: 'running', attempts: line.attempts + 1 }, this.deps.owner);
        this.track(batch.id, this.runRealtime(batch, line, owner.key, signal));
      } else {
        // No realtime slot: the line waits for a later pass (the lease is handed back at once).
        await this.deps.store.updateLine(batch.id, line.lineNo, { state: 'pending', leaseOwner: undefined, leaseUntil: undefined }, this.deps.owner);
      }
    }
  }

  /** Whether any model has a deployment whose upstream batch API is used for this endpoint. */
  private mayGoUpstream(endpoint: string): boolean {
    const upstream = this.deps.upstream;
    if (upstream === undefined) return false;
    for (const model of this.deps.catalog.models.values()) if (model.enabledDeployments.some((d) => upstream.accepts(d, endpoint))) return true;
    return false;
  }

  /** The first deployment of the line's model whose upstream batch API is used for this endpoint. */
  private upstreamDeployment(batch: Batch, line: BatchLine): string | undefined {
    const upstream = this.deps.upstream;
    if (upstream === undefined || line.model === undefined) return undefined;
    const model = this.deps.catalog.findModel(line.model);
    return model?.enabledDeployments.find((d) => upstream.accepts(d, batch.endpoint))?.key;
  }

  private async renewLeases(now: number): Promise<void> {
    const leaseUntil = now + this.deps.config.worker.lease_ms;
    for (const [id, line] of this.held) {
      // False: the line was taken from this replica (its lease had run out, or the batch expired): stop renewing it.
      if (!(await this.deps.store.updateLine(line.batchId, line.lineNo, { leaseUntil }, this.deps.owner))) this.held.delete(id);
    }
  }

  private async runRealtime(batch: Batch, line: BatchLine, key: KeyInfo, signal: AbortLink): Promise<void> {
    const id = `${batch.id}#${line.lineNo}`;
    this.held.set(id, { batchId: batch.id, lineNo: line.lineNo });
    try {
      await this.runHeld(batch, line, key, signal);
    } finally {
      this.held.delete(id);
    }
  }

  private async runHeld(batch: Batch, line: BatchLine, key: KeyInfo, signal: AbortLink): Promise<void> {
    let result: LineResult;
    try {
      const file = await this.deps.store.getFile(batch.inputFileId);
      if (file === undefined) throw new HerdError('INTERNAL', `the input file ${batch.inputFileId} of batch ${batch.id} is gone`);
      const body = await readLineBody(this.deps.fileStore, file.storageRef, line, batch.dialect);
      result = await this.deps.runRealtime({ batch, line, key, body, signal });
    } catch (err) {
      result = { outcome: 'errored', ...this.deps.encodeError(batch.endpoint, toHerdError(err)) };
    }
    // Stopping mid-line: the line stays running under its lease and is taken over (billed once by its request id).
    if (signal.aborted) return;
    await this.end(batch, line, result);
  }

  private async end(batch: Batch, line: BatchLine, result: LineResult): Promise<void> {
    const state = result.outcome === 'succeeded' ? 'succeeded' : result.outcome === 'errored' ? 'errored' : result.outcome;
    const statusCode = 'statusCode' in result ? result.statusCode : undefined;
    await this.deps.store.updateLine(batch.id, line.lineNo, { state, result, statusCode, leaseOwner: undefined, leaseUntil: undefined }, this.deps.owner);
  }

  private track(batchId: string, run: Promise<void>): void {
    this.runningByBatch.set(batchId, (this.runningByBatch.get(batchId) ?? 0) + 1);
    const tracked = run
      .catch((err: unknown) => this.deps.log(`batch line: ${toHerdError(err).message}`))
      .finally(() => {
        this.running.delete(tracked);
        const left = (this.runningByBatch.get(batchId) ?? 1) - 1;
        if (left > 0) this.runningByBatch.set(batchId, left);
        else this.runningByBatch.delete(batchId);
        this.wake();
      });
    this.running.add(tracked);
  }

  /** A realtime slot came free: look for the next lines now rather than after the interval. */
  private wake(): void {
    if (!this.sleeping || this.timer === undefined) return;
    clearTimeout(this.timer);
    this.schedule(0);
  }
}
