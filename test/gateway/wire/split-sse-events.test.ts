// The pass-through event splitter: whole events with their exact text, whatever the framing and however
// the bytes are cut across reads.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SseEventSplitter, type SseBlock } from '../../../src/gateway/wire/split-sse-events.ts';

const feedAll = (parts: string[]): { blocks: SseBlock[]; pending: string } => {
  const splitter = new SseEventSplitter();
  const blocks = parts.flatMap((p) => splitter.feed(p));
  return { blocks, pending: splitter.pending() };
};

describe('SseEventSplitter', () => {
  const stream = 'data: {"a":1}\n\nevent: ping\ndata: {}\n\n: comment\n\ndata:x\ndata: y\n\ndata: [DONE]\n\n';

  it('keeps each event exactly, its name and its joined data', () => {
    const { blocks, pending } = feedAll([stream]);
    assert.equal(blocks.map((b) => b.text).join(''), stream);
    assert.deepEqual(
      blocks.map((b) => [b.event, b.data]),
      [
        [undefined, '{"a":1}'],
        ['ping', '{}'],
        [undefined, undefined],
        [undefined, 'x\ny'],
        [undefined, '[DONE]'],
      ],
    );
    assert.equal(pending, '');
  });

  it('gives the same events for every way of cutting the bytes, CRLF and CR included', () => {
    for (const text of [stream, stream.replaceAll('\n', '\r\n'), stream.replaceAll('\n', '\r')]) {
      const whole = feedAll([text]).blocks;
      // CR-only: the last CR may yet become CRLF, so the last event waits for more bytes.
      assert.equal(whole.length, text.endsWith('\r\r') ? 4 : 5);
      for (let cut = 1; cut < text.length; cut++) {
        const parts = feedAll([text.slice(0, cut), text.slice(cut)]);
        assert.deepEqual(
          parts.blocks.map((b) => b.data),
          whole.map((b) => b.data),
          `cut at ${cut}`,
        );
      }
      const bytewise = feedAll([...text]);
      assert.equal(bytewise.blocks.map((b) => b.text).join('') + bytewise.pending, text);
    }
  });

  it('keeps an unfinished tail pending and drops a leading BOM', () => {
    const { blocks, pending } = feedAll(['\ufeffdata: 1\n\ndata: 2\n']);
    assert.deepEqual(
      blocks.map((b) => b.data),
      ['1'],
    );
    assert.equal(pending, 'data: 2\n');
  });
});
