// A piece of an upstream's own SSE text on its way to a client of the same dialect (byte pass-through):
// whole events, verbatim but for the model name, written to the client as they are. A stream carries
// these instead of canonical chunks only when its caller asked for its dialect's bytes.
import { HerdError } from '../../core/errors.ts';
import type { ChatChunk } from './chat-types.ts';
import type { IngressDialect } from './ingress-dialect.ts';

export class RawSse {
  constructor(
    /** Whole SSE events, each through its blank line. */
    readonly text: string,
    /** The dialect the events are written in (the client's: pass-through only happens between equals). */
    readonly dialect: IngressDialect,
  ) {}
}

/** What a gateway stream yields: canonical chunks, or (pass-through) the upstream's own events. */
export type StreamPiece = ChatChunk | RawSse;

/** The chunk itself, for a consumer that never asked for raw pieces (a raw one there is Herd's bug). */
export function canonicalChunk(piece: StreamPiece): ChatChunk {
  if (piece instanceof RawSse) throw new HerdError('INTERNAL', 'a pass-through stream reached a consumer that reads canonical chunks');
  return piece;
}
