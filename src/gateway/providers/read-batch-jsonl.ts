// Splits a JSONL download (an upstream batch's results) into parsed lines as its bytes arrive, so a file of
// any size is read with one line in memory at a time; a line past the cap is refused, not buffered.
import { StringDecoder } from 'node:string_decoder';
import type { HttpUpstream } from './http-upstream.ts';

/** Longer than any one answer a batch line can carry (a chat completion of the largest output). */
export const MAX_BATCH_JSONL_LINE_CHARS = 64 * 1024 * 1024;

/** Each non-empty line of `chunks`, parsed; malformed JSON or an over-long line is the upstream's `malformed`. */
export async function* readBatchJsonl(chunks: AsyncIterable<Buffer>, upstream: HttpUpstream, what: string): AsyncGenerator<unknown> {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  let lineNo = 0;
  for await (const chunk of chunks) {
    pending += decoder.write(chunk);
    let start = 0;
    for (let end = pending.indexOf('\n'); end !== -1; end = pending.indexOf('\n', start)) {
      const line = pending.slice(start, end).trim();
      start = end + 1;
      lineNo++;
      if (line !== '') yield upstream.parseJson(line, `${what} line ${lineNo}`);
    }
    pending = pending.slice(start);
    if (pending.length > MAX_BATCH_JSONL_LINE_CHARS) throw upstream.malformed(`${what} line ${lineNo + 1} is longer than ${MAX_BATCH_JSONL_LINE_CHARS} characters`);
  }
  const last = (pending + decoder.end()).trim();
  if (last !== '') yield upstream.parseJson(last, `${what} line ${lineNo + 1}`);
}
