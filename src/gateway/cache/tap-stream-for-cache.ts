// Watches a live stream on its way to the client so that, if it completes, the whole answer can be
// assembled as a chat.completion — how a streaming miss gets stored. The flow asks once the stream ended.
import type { ChatResponse } from '../chat-types.ts';
import { convertUsageToOpenAI } from '../convert-usage-to-openai.ts';
import { parseRawStreamChunks } from '../dialects/parse-raw-stream-chunks.ts';
import { RawSse, type StreamPiece } from '../raw-sse.ts';
import type { StreamRelay, StreamResult } from '../stream-relay.ts';
import { ChatResponseAssembler } from './assemble-chat-response.ts';

export interface TappedStream {
  /** The same relay, its chunks observed. */
  relay: StreamRelay;
  /** The answer the chunks made, for a completed stream; undefined otherwise (cancelled, failed, malformed). */
  assemble(result: StreamResult): ChatResponse | undefined;
}

export function tapStreamForCache(relay: StreamRelay): TappedStream {
  const assembler = new ChatResponseAssembler();
  const raw: RawSse[] = [];
  return {
    relay: { chunks: tapChunks(relay.chunks, assembler, raw), cancel: relay.cancel, result: relay.result },
    assemble(result) {
      if (result.outcome !== 'completed') return undefined;
      // Pass-through pieces are parsed here, once, for the stored copy only (they reached the client as bytes).
      if (raw.length > 0) {
        for (const chunk of parseRawStreamChunks(
          raw[0].dialect,
          raw.map((piece) => piece.text),
        ))
          assembler.add(chunk);
      }
      // The usage chunk reaches the client only under include_usage; the result always has the usage.
      const response = assembler.build(convertUsageToOpenAI(result.usage));
      return response instanceof Error ? undefined : response;
    },
  };
}

// A module-level generator with its inputs as arguments, not a closure: see stream-relay.ts.
async function* tapChunks(chunks: AsyncIterable<StreamPiece>, assembler: ChatResponseAssembler, raw: RawSse[]): AsyncGenerator<StreamPiece> {
  for await (const piece of chunks) {
    if (piece instanceof RawSse) raw.push(piece);
    else assembler.add(piece);
    yield piece;
  }
}
