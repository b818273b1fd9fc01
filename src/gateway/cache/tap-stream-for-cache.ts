// Watches a live stream on its way to the client so that, if it completes, the whole answer can be
// assembled as a chat.completion — how a streaming miss gets stored — together with the pass-through
// SSE text the client got, for a later hit of the same dialect. The flow asks once the stream ended.
import type { ChatResponse } from '../protocol/chat-types.ts';
import { convertUsageToOpenAI } from '../wire/openai-chat/convert-usage-to-openai.ts';
import { parseRawStreamChunks } from '../wire/parse-raw-stream-chunks.ts';
import type { IngressDialect } from '../protocol/ingress-dialect.ts';
import { RawSse, type StreamPiece } from '../protocol/raw-sse.ts';
import { ChatResponseAssembler } from './assemble-chat-response.ts';
import type { StreamRelay, StreamResult } from '../protocol/stream-relay-types.ts';

export interface TappedStream {
  /** The same relay, its chunks observed. */
  relay: StreamRelay;
  /** The answer the chunks made, for a completed stream; undefined otherwise (cancelled, failed, malformed). */
  assemble(result: StreamResult): TappedAnswer | undefined;
}

export interface TappedAnswer {
  response: ChatResponse;
  /**
   * The upstream's SSE text as the client got it, when every piece was raw and of one dialect. A stream
   * that mixed in canonical chunks (e.g. the usage chunk Herd writes when an upstream sent none) has none:
   * those chunks were encoded by the transport, and only the canonical replay can reproduce them.
   */
  bytes?: { dialect: IngressDialect; events: string[] };
}

/** What the tap saw besides the assembled chunks. */
interface TapState {
  raw: RawSse[];
  canonical: number;
}

export function tapStreamForCache(relay: StreamRelay): TappedStream {
  const assembler = new ChatResponseAssembler();
  const state: TapState = { raw: [], canonical: 0 };
  return {
    relay: { chunks: tapChunks(relay.chunks, assembler, state), cancel: relay.cancel, result: relay.result },
    assemble(result) {
      if (result.outcome !== 'completed') return undefined;
      const { raw } = state;
      const dialect = raw[0]?.dialect;
      // Pass-through pieces are parsed here, once, for the stored copy only (they reached the client as bytes).
      if (dialect !== undefined) {
        for (const chunk of parseRawStreamChunks(
          dialect,
          raw.map((piece) => piece.text),
        ))
          assembler.add(chunk);
      }
      // The usage chunk reaches the client only under include_usage; the result always has the usage.
      const response = assembler.build(convertUsageToOpenAI(result.usage));
      if (response instanceof Error) return undefined;
      const whole = dialect !== undefined && state.canonical === 0 && raw.every((piece) => piece.dialect === dialect);
      return whole ? { response, bytes: { dialect, events: raw.map((piece) => piece.text) } } : { response };
    },
  };
}

// A module-level generator with its inputs as arguments, not a closure: see stream-relay.ts.
async function* tapChunks(chunks: AsyncIterable<StreamPiece>, assembler: ChatResponseAssembler, state: TapState): AsyncGenerator<StreamPiece> {
  for await (const piece of chunks) {
    if (piece instanceof RawSse) state.raw.push(piece);
    else {
      state.canonical++;
      assembler.add(piece);
    }
    yield piece;
  }
}
