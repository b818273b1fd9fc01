// Streams an upstream batch's request body from its lines (a JSONL file, a JSON array), counting lines and
// bytes as it goes and refusing at the first line past the upstream's documented limits: the upload is
// aborted there, so an over-size batch never exists upstream.
import { HerdError } from '../../core/errors.ts';
import type { JsonObject } from '../protocol/check-json-value.ts';
import { encodeUpstreamBody } from './encode-upstream-body.ts';
import type { UpstreamBatchLimits, UpstreamBatchLine } from './upstream-batch-client.ts';

export interface BatchBodyShape {
  head: string;
  /** Written before every line but the first. */
  separator: string;
  /** Written after every line, separator or not (JSONL's newline). */
  terminator: string;
  tail: string;
  /** The line as the upstream wants it, before encoding. */
  wrap(line: UpstreamBatchLine): JsonObject;
}

/** Filled in while the body streams: what went up, lines and payload bytes (head and tail not counted). */
export interface BatchBodyCount {
  lines: number;
  bytes: number;
}

const CHUNK_BYTES = 64 * 1024;
/** An upstream's own field rule for custom_id (Anthropic's ^[a-zA-Z0-9_-]{1,64}$), checked before sending. */
export type CustomIdRule = { pattern: RegExp; description: string } | undefined;

export async function* encodeBatchBody(
  lines: AsyncIterable<UpstreamBatchLine> | Iterable<UpstreamBatchLine>,
  shape: BatchBodyShape,
  limits: UpstreamBatchLimits,
  count: BatchBodyCount,
  provider: string,
  customIds: CustomIdRule = undefined,
): AsyncGenerator<Buffer> {
  let buffered: string[] = [shape.head];
  let bufferedBytes = Buffer.byteLength(shape.head);
  for await (const line of lines) {
    if (customIds !== undefined && !customIds.pattern.test(line.customId)) {
      throw new HerdError('INVALID_ARG', `${provider}: custom_id '${line.customId.slice(0, 80)}' does not match ${customIds.description}`);
    }
    const text = (count.lines === 0 ? '' : shape.separator) + encodeUpstreamBody(shape.wrap(line)) + shape.terminator;
    const bytes = Buffer.byteLength(text);
    if (count.lines + 1 > limits.maxLines || count.bytes + bytes > limits.maxBytes) {
      throw new HerdError(
        'PAYLOAD_TOO_LARGE',
        `${provider}: an upstream batch holds at most ${limits.maxLines} requests and ${limits.maxBytes} bytes; line ${count.lines + 1} would exceed that`,
      );
    }
    count.lines++;
    count.bytes += bytes;
    buffered.push(text);
    bufferedBytes += bytes;
    if (bufferedBytes >= CHUNK_BYTES) {
      yield Buffer.from(buffered.join(''));
      buffered = [];
      bufferedBytes = 0;
    }
  }
  if (count.lines === 0) throw new HerdError('INVALID_ARG', `${provider}: an upstream batch needs at least one request`);
  buffered.push(shape.tail);
  yield Buffer.from(buffered.join(''));
}
