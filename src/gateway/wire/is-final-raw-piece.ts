// Which pass-through piece is an upstream's own last event, for the dialects whose stream ends with one
// (Anthropic's message_stop, Responses' response.completed): the flow holds it until the request's rows
// commit, as it holds Herd's own end ([DONE]) of the other dialects. Providers hand it over as a piece of
// its own, and cache replays keep the pieces as they were, so one look at a piece's start decides.
import { RawSse, type StreamPiece } from '../protocol/raw-sse.ts';
import { isMessageStopPiece } from './anthropic-messages/is-message-stop-piece.ts';

/** The piece openai-provider.ts hands response.completed / response.incomplete over as. */
const RESPONSES_LAST = /^event: ?response\.(completed|incomplete)\r?\n/;

export function isFinalRawPiece(piece: StreamPiece): boolean {
  if (!(piece instanceof RawSse)) return false;
  switch (piece.dialect) {
    case 'anthropic-messages':
      return isMessageStopPiece(piece);
    case 'openai-responses':
      return RESPONSES_LAST.test(piece.text);
    default:
      // OpenAI chat and completions end with Herd's own [DONE], written after the stream's end.
      return false;
  }
}
