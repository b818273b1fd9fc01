// What Anthropic Messages pass-through reads from the events it forwards: usage (message_start and
// message_delta, the only parsed events besides error), stop reason, model, content-event count, errors,
// framing — the same whichever point the upstream's text is cut at.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AnthropicMessagesPassThrough, type AnthropicPassDecision } from '../../../../src/gateway/wire/anthropic-messages/pass-anthropic-events.ts';
import { SseEventSplitter } from '../../../../src/gateway/wire/split-sse-events.ts';
import { readFixture } from '../../helpers/replay-fixture.ts';

const MODEL = 'claude-sonnet-4-5-20250929';
const event = (name: string, data: string, lineEnd = '\n') => `event: ${name}${lineEnd}data: ${data}${lineEnd}${lineEnd}`;

const START = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"${MODEL}","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":10,"cache_read_input_tokens":128,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":0},"output_tokens":2,"service_tier":"standard"}}}`;
const DELTA = `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"input_tokens":null,"output_tokens":89,"server_tool_use":{"web_search_requests":1}}}`;

/** A whole stream: named events, a ping, a comment, an unknown event type, a text delta that looks like a field. */
const STREAM =
  event('message_start', START) +
  event('content_block_start', '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}') +
  event('ping', '{"type": "ping"}') +
  ': keep-alive\n\n' +
  event('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"say \\"type\\":\\"error\\" é"}}') +
  event('content_block_stop', '{"type":"content_block_stop","index":0}') +
  event('future_event', '{"type":"future_event","x":1}') +
  event('message_delta', DELTA) +
  event('message_stop', '{"type":"message_stop"}');

interface Reading {
  forwarded: string;
  stop: string;
  decisions: string[];
  pass: AnthropicMessagesPassThrough;
}

/** Splits and reads `pieces` as the provider does: forwarded text, the message_stop event, each decision. */
function readPieces(pieces: string[]): Reading {
  const splitter = new SseEventSplitter();
  const pass = new AnthropicMessagesPassThrough();
  const decisions: string[] = [];
  let forwarded = '';
  let stop = '';
  for (const piece of pieces) {
    for (const block of splitter.feed(piece)) {
      const decision: AnthropicPassDecision = pass.read(block);
      decisions.push(decision.kind);
      if (decision.kind === 'forward') forwarded += block.text;
      if (decision.kind === 'stop') stop = block.text;
    }
  }
  return { forwarded, stop, decisions, pass };
}

describe('AnthropicMessagesPassThrough', () => {
  it('forwards every event as sent and reads usage, stop reason, model and the content-event count', () => {
    const { forwarded, stop, decisions, pass } = readPieces([STREAM]);
    assert.equal(forwarded + stop, STREAM);
    assert.equal(stop, event('message_stop', '{"type":"message_stop"}'));
    assert.deepEqual(decisions, ['forward', 'forward', 'forward', 'forward', 'forward', 'forward', 'forward', 'forward', 'stop']);
    assert.equal(pass.chunks, 3);
    assert.equal(pass.model, MODEL);
    assert.deepEqual([pass.rawStopReason, pass.finishReason, pass.stopped], ['tool_use', 'tool_calls', true]);
    const usage = pass.usage;
    // input 472 + cache read 128 + cache write 10; message_delta's null input_tokens does not erase message_start's.
    assert.deepEqual([usage?.promptTokens, usage?.cachedPromptTokens, usage?.cacheWriteTokens, usage?.completionTokens], [610, 128, 10, 89]);
    const raw = usage?.raw as Record<string, unknown> | undefined;
    assert.deepEqual(raw?.server_tool_use, { web_search_requests: 1 });
    assert.equal(raw?.service_tier, 'standard');
  });

  it('reads the same at every cut point of the upstream text, CRLF framing included', () => {
    const whole = readPieces([STREAM]);
    for (const text of [STREAM, STREAM.replaceAll('\n', '\r\n')]) {
      for (let cut = 0; cut <= text.length; cut++) {
        const cutRead = readPieces([text.slice(0, cut), text.slice(cut)]);
        assert.equal(cutRead.forwarded + cutRead.stop, text, `cut at ${cut}`);
        assert.deepEqual(cutRead.decisions, whole.decisions, `cut at ${cut}`);
        assert.deepEqual([cutRead.pass.chunks, cutRead.pass.model, cutRead.pass.rawStopReason], [3, MODEL, 'tool_use'], `cut at ${cut}`);
        assert.deepEqual(cutRead.pass.usage?.completionTokens, 89, `cut at ${cut}`);
      }
    }
  });

  it('takes the event type from data when the server sends no event names', () => {
    const nameless = STREAM.replace(/^event: [a-z_]+\n/gm, '');
    const { forwarded, stop, pass } = readPieces([nameless]);
    assert.equal(forwarded + stop, nameless);
    assert.deepEqual([pass.chunks, pass.rawStopReason, pass.stopped], [3, 'tool_use', true]);
  });

  it('an error event is its parsed body; anything that is not a JSON object is malformed', () => {
    const pass = new AnthropicMessagesPassThrough();
    const error = pass.read({ text: '', event: 'error', data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' });
    assert.deepEqual(error, { kind: 'error', body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    assert.equal(pass.read({ text: '', event: 'content_block_delta', data: '{"type":"content_block_delta","index":0,"delta":{' }).kind, 'malformed');
    assert.equal(pass.read({ text: '', event: 'content_block_delta', data: 'not json' }).kind, 'malformed');
    // Looks like an object but does not parse: only the events Herd parses can tell.
    assert.equal(pass.read({ text: '', event: 'message_delta', data: '{"type":"message_delta",}' }).kind, 'malformed');
    assert.equal(pass.read({ text: '', event: 'error', data: '{"type":"error",,}' }).kind, 'malformed');
    assert.equal(pass.chunks, 0);
  });
});

describe('AnthropicMessagesPassThrough on recorded streams', () => {
  it('forwards every recorded event but message_stop as sent, at any cut, and reads their usage', () => {
    const cases = [
      ['messages-text.sse', 12, 14, 'end_turn'],
      ['messages-tool-use.sse', 600, 89, 'tool_use'],
      ['messages-thinking.sse', 46, 62, 'end_turn'],
    ] as const;
    for (const [file, prompt, completion, stop] of cases) {
      const text = readFixture('anthropic', file).text;
      for (const cut of [1, 97, text.length - 5]) {
        const reading = readPieces([text.slice(0, cut), text.slice(cut)]);
        assert.equal(reading.forwarded + reading.stop, text, `${file} cut ${cut}`);
        assert.match(reading.stop, /^event: message_stop\n/);
        assert.deepEqual([reading.pass.usage?.promptTokens, reading.pass.usage?.completionTokens], [prompt, completion], file);
        assert.equal(reading.pass.rawStopReason, stop, file);
      }
    }
  });
});
