// The SSE answer of every gateway dialect, from the stream's first chunk on: the x-herd-* headers, then
// the pieces through the one writer (sse-writer.ts), which pauses the upstream while the client does not
// read. The first piece says whose events these are: an upstream's own (RawSse, written as they came)
// or canonical chunks the codec encodes. No upstream switch after the headers.
import type { ServerResponse } from 'node:http';
import { HerdError, toHerdError } from '../core/errors.ts';
import type { ChatStream } from '../gateway/flow/chat-service.ts';
import type { IngressCodec, IngressStreamEncoder, SseEvent } from '../gateway/protocol/ingress-codec.ts';
import { RawSse, type StreamPiece } from '../gateway/protocol/raw-sse.ts';
import type { DialectEdge } from './dialect-edge.ts';
import { herdHeaders } from './herd-headers.ts';
import { SseWriter, type StreamLimits } from './sse-writer.ts';

const formatEvent = (e: SseEvent) => e.text ?? `${e.event !== undefined ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`;

/** A started stream with what writes it in the client's dialect. */
export interface GatewayStreamAnswer<F> {
  kind: 'stream';
  stream: ChatStream;
  cache: string;
  encoder: IngressStreamEncoder<F>;
  raw: IngressCodec<unknown, F>['raw'];
}

export async function writeGatewayStream<F>(
  answer: GatewayStreamAnswer<F>,
  edge: DialectEdge<F>,
  res: ServerResponse,
  options: { limits: StreamLimits; closing: boolean; started: number },
): Promise<void> {
  const { stream, encoder, raw } = answer;
  const headers = herdHeaders(stream.meta, options.started);
  headers['content-type'] = 'text/event-stream; charset=utf-8';
  headers['cache-control'] = 'no-cache';
  headers['x-herd-cache'] = answer.cache;
  if (options.closing) headers['connection'] = 'close';
  res.writeHead(200, headers);
  // A reader that stalls cancels the relay: the ledger row is written for what was delivered.
  const sse = new SseWriter(res, options.limits, () => stream.cancel());
  const sendAll = (events: SseEvent[]) => {
    for (const e of events) sse.send(formatEvent(e));
  };
  const pieces = stream.chunks[Symbol.asyncIterator]();
  // Set once an upstream's own event went out: Herd then writes only the end (raw.end / raw.fail).
  let lastRaw: string | undefined;
  const fail = (error: HerdError) => {
    const failure = edge.mapError(error).failure;
    if (lastRaw !== undefined && raw !== undefined) sse.send(raw.fail(failure, lastRaw));
    else sendAll(encoder.fail(failure));
  };
  const write = (piece: StreamPiece) => {
    if (piece instanceof RawSse) {
      lastRaw = piece.text;
      sse.send(piece.text);
    } else sendAll(encoder.chunk(piece));
  };
  try {
    const first = await pieces.next();
    if (first.done || !(first.value instanceof RawSse)) sendAll(encoder.start());
    if (!first.done) {
      write(first.value);
      for (;;) {
        const wait = sse.waitForReader();
        if (wait !== undefined && !(await wait)) break;
        if (sse.closed) break;
        const next = await pieces.next();
        if (next.done) break;
        write(next.value);
      }
    }
    if (!sse.closed) {
      const result = await stream.result;
      if (result.outcome === 'failed') fail(result.error ?? new HerdError('UPSTREAM_ERROR', 'the upstream stream failed'));
      else if (lastRaw !== undefined && raw !== undefined) sse.send(raw.end());
      else sendAll(encoder.end(result.usage, result));
    }
  } catch (err) {
    // After the first byte there is no switching upstream: the client gets the dialect's error event.
    fail(toHerdError(err));
  } finally {
    // A client that left (or Herd's own error) stops the stream; after its end this does nothing.
    void pieces.return?.()?.catch(() => undefined);
    sse.end();
  }
}
