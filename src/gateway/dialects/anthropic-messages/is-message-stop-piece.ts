// Recognises the pass-through piece that ends an Anthropic stream: the provider sends message_stop in a
// piece of its own, and the transport holds it until the stream's end (the ledger's rows) is settled.
import type { RawSse } from '../../raw-sse.ts';

// The event line as SSE frames it (optional space after the colon, any line end), or a nameless event's type.
const NAMED_STOP = /^event: ?message_stop(\r\n|\r|\n)/;
const TYPED_STOP = /^data: ?\{\s*"type"\s*:\s*"message_stop"/;

export function isMessageStopPiece(piece: RawSse): boolean {
  return piece.dialect === 'anthropic-messages' && (NAMED_STOP.test(piece.text) || TYPED_STOP.test(piece.text));
}
