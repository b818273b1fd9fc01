// Cuts an upstream's SSE text into whole events without re-framing them, for byte pass-through: each
// event keeps its exact text (blank-line terminator included) beside its `event:` name and joined `data:`.
// Framing as the WHATWG event-stream rules read it: LF, CRLF or CR line ends, an optional space after
// the colon, comment lines; an event is complete at its blank line, and text after the last one waits.

export interface SseBlock {
  /** The event exactly as received, through its terminating blank line. */
  text: string;
  /** The `event:` field; undefined when absent. */
  event: string | undefined;
  /** The `data:` lines joined by LF; undefined when the block has none (comments, a lone `id:`). */
  data: string | undefined;
}

export class SseEventSplitter {
  private rest = '';
  private started = false;

  /** The events completed by `text`, in order; an incomplete tail is kept for the next call. */
  feed(text: string): SseBlock[] {
    let buffer = this.rest === '' ? text : this.rest + text;
    if (!this.started && buffer.length > 0) {
      this.started = true;
      if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
    }
    const blocks: SseBlock[] = [];
    let from = 0;
    const crAt = buffer.indexOf('\r');
    for (;;) {
      const end = findEventEnd(buffer, from, crAt);
      if (end < 0) break;
      blocks.push(parseBlock(buffer.slice(from, end)));
      from = end;
    }
    this.rest = from === 0 ? buffer : buffer.slice(from);
    return blocks;
  }

  /** Bytes after the last complete event (an event the stream never finished; SSE drops it). */
  pending(): string {
    return this.rest;
  }
}

/**
 * The index just past the blank line ending the event starting at `from`, or -1. `crAt` is where the
 * buffer's first CR is (-1: none), so the common LF-only stream is one indexOf per event.
 */
function findEventEnd(text: string, from: number, crAt: number): number {
  if (crAt < 0) {
    const end = text.indexOf('\n\n', from);
    return end < 0 ? -1 : end + 2;
  }
  let i = from;
  for (;;) {
    const lf = text.indexOf('\n', i);
    const cr = text.indexOf('\r', i);
    if (lf < 0 && cr < 0) return -1;
    // The next line end: CRLF counts as one; a CR at the very end may still be followed by LF.
    let at: number;
    let next: number;
    if (cr >= 0 && (lf < 0 || cr < lf)) {
      if (cr + 1 === text.length) return -1;
      at = cr;
      next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1;
    } else {
      at = lf;
      next = lf + 1;
    }
    // An empty line (a line end where the line starts) ends the event.
    if (at === i) return next;
    i = next;
  }
}

const LINE_END = /\r\n|\r|\n/;

function parseBlock(text: string): SseBlock {
  let event: string | undefined;
  let data: string | undefined;
  const lines = text.indexOf('\r') < 0 ? text.split('\n') : text.split(LINE_END);
  for (const line of lines) {
    if (line === '' || line.charCodeAt(0) === 58 /* : comment */) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data' && field !== 'event') continue;
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else event = value;
  }
  return { text, event, data };
}
