// A batch whose every line is terminal is ended once, by whichever replica gets there first: its counts written,
// OpenAI's output and error files assembled in line order (streamed from the store a page at a time), the status
// moved (completed, cancelled or expired), and what its budget reservation still holds released.
import type { Ledger } from '../billing/ledger.ts';
import type { Batch, BatchFile, BatchLineState, BatchStatus, BatchStore } from './batch-store.ts';
import type { FileService } from './file-service.ts';
import { formatOutputLine, outputFileOf } from './openai-output-lines.ts';
import { readBatchLines } from './read-batch-lines.ts';

export interface FinalizeDeps {
  store: BatchStore;
  files: FileService;
  ledger: Pick<Ledger, 'release'> | undefined;
  now: () => number;
  log: (line: string) => void;
}

const OPEN_LINES: readonly BatchLineState[] = ['pending', 'queued_upstream', 'running'];

/** True when no line of the batch is left to run. */
export function allLinesEnded(counts: Partial<Record<BatchLineState, number>>): boolean {
  return OPEN_LINES.every((state) => (counts[state] ?? 0) === 0);
}

/**
 * Ends `batch` (in_progress, cancelling, or a finalizing one left behind by a replica that died); false when
 * another replica ended it first (the files this one wrote are then removed).
 */
export async function finalizeBatch(deps: FinalizeDeps, batch: Batch, counts: Partial<Record<BatchLineState, number>>): Promise<boolean> {
  const now = deps.now();
  let from: BatchStatus = batch.status;
  if (batch.status === 'in_progress') {
    // Claims the batch: only the replica that moves it to finalizing writes its files.
    if (!(await deps.store.updateBatch(batch.id, { status: 'finalizing', finalizingAt: now }, ['in_progress']))) return false;
    from = 'finalizing';
  }
  const files = batch.dialect === 'openai' ? await writeOutputFiles(deps, batch, counts) : { output: undefined, error: undefined };
  // As OpenAI: a batch some of whose requests ran out of its window is `expired` (the rest answered, in its files).
  const status: BatchStatus = batch.status === 'cancelling' ? 'cancelled' : batch.expiresAt <= now || (counts.expired ?? 0) > 0 ? 'expired' : 'completed';
  const ended = await deps.store.updateBatch(
    batch.id,
    {
      status,
      ...(status === 'cancelled' ? { cancelledAt: now } : status === 'expired' ? { expiredAt: now } : { completedAt: now }),
      completed: counts.succeeded ?? 0,
      failed: (counts.errored ?? 0) + (counts.canceled ?? 0) + (counts.expired ?? 0),
      outputFileId: files.output?.id,
      errorFileId: files.error?.id,
    },
    [from],
  );
  if (!ended) {
    for (const file of [files.output, files.error]) if (file !== undefined) await deps.files.removeInternal(file.id);
    return false;
  }
  // What the lines did not use goes back to the budgets; a result arriving later still charges (settlePart).
  if (batch.reservedMicros > 0) await deps.ledger?.release(batch.id).catch((err: unknown) => deps.log(`batch ${batch.id}: releasing its reservation failed: ${String(err)}`));
  return true;
}

async function writeOutputFiles(
  deps: FinalizeDeps,
  batch: Batch,
  counts: Partial<Record<BatchLineState, number>>,
): Promise<{ output: BatchFile | undefined; error: BatchFile | undefined }> {
  const failed = (counts.errored ?? 0) + (counts.canceled ?? 0) + (counts.expired ?? 0);
  const output = (counts.succeeded ?? 0) > 0 ? await deps.files.storeOutput(batch.keyId, `batch_${batch.id}_output.jsonl`, linesOf(deps.store, batch.id, 'output')) : undefined;
  const error = failed > 0 ? await deps.files.storeOutput(batch.keyId, `batch_${batch.id}_error.jsonl`, linesOf(deps.store, batch.id, 'error')) : undefined;
  return { output, error };
}

async function* linesOf(store: BatchStore, batchId: string, file: 'output' | 'error'): AsyncGenerator<Buffer> {
  for await (const page of readBatchLines(store, batchId)) {
    const text = page
      .filter((line) => outputFileOf(line) === file)
      .map(formatOutputLine)
      .join('');
    if (text !== '') yield Buffer.from(text, 'utf8');
  }
}
