// Splits a JSONL download (an upstream batch's results) into parsed lines as its bytes arrive, so a file of
// any size is read with one line in memory at a time; a line past the cap is refused, not buffered.
import { readJsonlLines } from '../wire/jsonl-line-source.ts';
import type { HttpUpstream } from './http-upstream.ts';

/** Longer than any one answer a batch line can carry (a chat completion of the largest output). */
export const MAX_BATCH_JSONL_LINE_BYTES = 64 * 1024 * 1024;

/** Each non-blank line of `chunks`, parsed; malformed JSON or an over-long line is the upstream's `malformed`. */
export async function* readBatchJsonl(chunks: AsyncIterable<Buffer>, upstream: HttpUpstream, what: string): AsyncGenerator<unknown> {
  for await (const record of readJsonlLines(chunks, { maxLineBytes: MAX_BATCH_JSONL_LINE_BYTES })) {
    if (record.bytes === undefined) throw upstream.malformed(`${what} line ${record.lineNo} is longer than ${MAX_BATCH_JSONL_LINE_BYTES} bytes`);
    yield upstream.parseJson(record.bytes.toString('utf8'), `${what} line ${record.lineNo}`);
  }
}
