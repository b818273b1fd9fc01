// A batch's lines in line order, read from the store a page at a time (results and output files never hold them all).
import type { BatchLine, BatchStore } from './batch-store.ts';

const PAGE = 1000;

export async function* readBatchLines(store: BatchStore, batchId: string): AsyncGenerator<BatchLine[]> {
  let from = 1;
  for (;;) {
    const page = await store.listLines(batchId, from, PAGE);
    if (page.length > 0) yield page;
    const last = page.at(-1);
    if (last === undefined || page.length < PAGE) return;
    from = last.lineNo + 1;
  }
}
