// Anthropic pass-through pieces (a recorded stream, test/fixtures/anthropic/) read back as canonical chunks
// (the estimate and the cache's copy), and the message_stop piece the transport holds back until the stream has settled.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isMessageStopPiece } from '../../../../src/gateway/wire/anthropic-messages/is-message-stop-piece.ts';
import { parseRawStreamChunks } from '../../../../src/gateway/wire/parse-raw-stream-chunks.ts';
import { ChatResponseAssembler } from '../../../../src/gateway/cache/assemble-chat-response.ts';
import { RawSse } from '../../../../src/gateway/protocol/raw-sse.ts';
import { readFixture } from '../../helpers/replay-fixture.ts';

const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
/** A recorded stream (text, then two tool_use blocks), message_stop held back as the transport does. */
const TEXT = readFixture('anthropic', 'messages-tool-use.sse').text.replace('event: message_stop\ndata: {"type":"message_stop"}\n\n', '');
const CALLS = [
  { id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
  { id: 'toolu_02', type: 'function', function: { name: 'now', arguments: '{}' } },
];

describe('parseRawStreamChunks for anthropic-messages', () => {
  it('reads the pieces, cut anywhere, into the chunks the translated path gives', () => {
    assert.ok(!TEXT.includes('message_stop'));
    for (const cut of [0, 7, 100, TEXT.length - 2]) {
      const chunks = parseRawStreamChunks('anthropic-messages', [TEXT.slice(0, cut), TEXT.slice(cut)]);
      const assembler = new ChatResponseAssembler();
      for (const chunk of chunks) assembler.add(chunk);
      const response = assembler.build({ prompt_tokens: 600, completion_tokens: 89, total_tokens: 689 });
      assert.ok(!(response instanceof Error));
      const message = response.choices[0]?.message;
      assert.equal(message?.content, 'Let me check.', `cut ${cut}`);
      assert.deepEqual(message?.tool_calls, CALLS, `cut ${cut}`);
      assert.equal(response.choices[0]?.finish_reason, 'tool_calls');
    }
  });

  it('skips what does not parse and stops at an error event', () => {
    const chunks = parseRawStreamChunks('anthropic-messages', [
      `${TEXT.slice(0, TEXT.indexOf('event: content_block_stop'))}event: content_block_delta\ndata: {"broken\n\n`,
      event('error', { type: 'error', error: { type: 'api_error', message: 'x' } }),
      event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'lost' } }),
    ]);
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), 'Let me check.');
  });
});

describe('isMessageStopPiece', () => {
  it('recognises the message_stop event however it is framed, in this dialect only', () => {
    assert.ok(isMessageStopPiece(new RawSse('event: message_stop\ndata: {"type":"message_stop"}\n\n', 'anthropic-messages')));
    assert.ok(isMessageStopPiece(new RawSse('event:message_stop\r\ndata:{"type":"message_stop"}\r\n\r\n', 'anthropic-messages')));
    assert.ok(isMessageStopPiece(new RawSse('data: {"type": "message_stop"}\n\n', 'anthropic-messages')));
    assert.ok(!isMessageStopPiece(new RawSse('event: message_stop\ndata: {"type":"message_stop"}\n\n', 'openai-chat')));
    assert.ok(!isMessageStopPiece(new RawSse('event: message_delta\ndata: {"type":"message_delta"}\n\n', 'anthropic-messages')));
    assert.ok(!isMessageStopPiece(new RawSse('event: message_stopped\ndata: {}\n\n', 'anthropic-messages')));
    assert.ok(isMessageStopPiece(new RawSse(': bye\nid: 9\ndata: {"type":"message_stop"}\nevent: message_stop\n\n', 'anthropic-messages')));
    assert.ok(!isMessageStopPiece(new RawSse('event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"message_stop"}}\n\n', 'anthropic-messages')));
  });
});
