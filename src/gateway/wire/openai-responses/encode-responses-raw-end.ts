// The end of a passed-through Responses stream that Herd writes itself: nothing when it completed (the
// upstream's response.completed was the end), and OpenAI's `error` event when it broke — Herd has not
// got the upstream's response object to put in a response.failed, but the event's sequence_number
// continues the upstream's numbering.
import type { StreamFailure } from '../../protocol/ingress-codec.ts';

export const responsesRawEnd = {
  end: (): string => '',
  fail(error: StreamFailure, lastText: string): string {
    // The codes the bridge's response.failed uses: a rate limit is named as such, any other failure is the server's.
    const code = error.code === 'rate_limit_exceeded' ? 'rate_limit_exceeded' : 'server_error';
    const event = { type: 'error', code, message: error.message, param: error.param, sequence_number: lastSequenceNumber(lastText) + 1 };
    return `event: error\ndata: ${JSON.stringify(event)}\n\n`;
  },
};

/** The last `"sequence_number":N` in `text`; -1 when it has none. */
function lastSequenceNumber(text: string): number {
  const at = text.lastIndexOf('"sequence_number"');
  if (at < 0) return -1;
  const match = /^"sequence_number"\s*:\s*(\d+)/.exec(text.slice(at, at + 40));
  return match === null ? -1 : Number(match[1]);
}
