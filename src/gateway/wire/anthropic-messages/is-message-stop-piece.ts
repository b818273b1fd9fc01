// Recognises the pass-through piece that ends an Anthropic stream: the provider sends message_stop in a
// piece of its own, and the flow holds it until the ledger's rows commit (is-final-raw-piece.ts).
import type { RawSse } from '../../protocol/raw-sse.ts';
import { SseEventSplitter } from '../split-sse-events.ts';

/** Longer than any message_stop event an upstream sends: content pieces are ruled out without a scan. */
const MAX_STOP_PIECE = 512;

export function isMessageStopPiece(piece: RawSse): boolean {
  if (piece.dialect !== 'anthropic-messages' || piece.text.length > MAX_STOP_PIECE || !piece.text.includes('message_stop')) return false;
  // Read as the provider's reader did: the event name, else data.type (framing, ids and comments aside).
  const blocks = new SseEventSplitter().feed(piece.text);
  const block = blocks.find((b) => b.data !== undefined);
  if (block?.data === undefined) return false;
  if (block.event !== undefined) return block.event === 'message_stop';
  return /^\s*\{\s*"type"\s*:\s*"message_stop"/.test(block.data);
}
