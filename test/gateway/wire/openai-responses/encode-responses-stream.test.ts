// The Responses stream encoder: the event sequence for text, reasoning, refusals and function calls, fed
// to the openai SDK's own stream accumulator, which rejects any event out of place.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseStream } from 'openai/lib/responses/ResponseStream';
import type { ChatChunk, ChatChunkDelta, FinishReason, Usage } from '../../../../src/gateway/protocol/chat-types.ts';
import type { SseEvent } from '../../../../src/gateway/protocol/ingress-codec.ts';
import { decodeResponsesRequest } from '../../../../src/gateway/ingress/openai-responses/decode-responses-request.ts';
import { encodeResponsesResponse } from '../../../../src/gateway/wire/openai-responses/encode-responses-response.ts';
import { createResponsesStreamEncoder } from '../../../../src/gateway/wire/openai-responses/encode-responses-stream.ts';

const usage: Usage = { promptTokens: 10, cachedPromptTokens: 2, cacheWriteTokens: 1, completionTokens: 6, reasoningTokens: 3, estimated: false, raw: {} };
const chunk = (delta: ChatChunkDelta, finish: FinishReason | null = null): ChatChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

function encode(chunks: ChatChunk[], end: 'end' | 'fail' = 'end'): SseEvent[] {
  const { decoded } = decodeResponsesRequest({ model: 'm', input: 'hi', stream: true });
  const encoder = createResponsesStreamEncoder(decoded, { model: 'public-m' });
  const events = [...encoder.start()];
  for (const c of chunks) events.push(...encoder.chunk(c));
  events.push(...(end === 'end' ? encoder.end(usage) : encoder.fail({ message: 'upstream reset', type: 'server_error', code: 'upstream_error', param: null })));
  return events;
}

/** The SDK's accumulator over our events: it throws on an event that does not fit the snapshot so far. */
async function accumulate(events: SseEvent[]) {
  const lines = events.map((e) => `${e.data as string}\n`).join('');
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(lines));
      controller.close();
    },
  });
  return ResponseStream.fromReadableStream(body).finalResponse();
}

const types = (events: SseEvent[]) => events.map((e) => e.event);
/** The encoder hands out each event serialised. */
const data = <T = Record<string, unknown>>(e: SseEvent | undefined): T => JSON.parse(e?.data as string) as T;

describe('Responses stream encoder', () => {
  it('reasoning, then text: each item added, its part, deltas, done; then completed with usage', async () => {
    const events = encode([
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning_content: 'think' }),
      chunk({ content: 'Hel' }),
      chunk({ content: 'lo' }),
      chunk({}, 'stop'),
    ]);
    assert.deepEqual(types(events), [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(
      events.map((e) => data<{ sequence_number: number }>(e).sequence_number),
      events.map((_, i) => i),
    );
    assert.ok(events.every((e) => data<{ type: string }>(e).type === e.event));
    const final = await accumulate(events);
    assert.equal(final.output_text, 'Hello');
    assert.equal(final.model, 'public-m');
    assert.equal(final.status, 'completed');
    assert.deepEqual(final.usage, {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 2, cache_write_tokens: 1 },
      output_tokens: 6,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 16,
    });
    // As a summary part: the part Responses clients (Codex) display.
    assert.deepEqual(final.output[0], { type: 'reasoning', id: final.output[0]?.id, summary: [{ type: 'summary_text', text: 'think' }], status: 'completed' });
  });

  it('text then two function calls: the message closes before the calls, arguments stream per call', async () => {
    const events = encode([
      chunk({ content: 'Checking.' }),
      chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'a', arguments: '{"x"' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'c2', type: 'function', function: { name: 'b', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ':1}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    const final = await accumulate(events);
    assert.equal(final.output_text, 'Checking.');
    assert.deepEqual(
      final.output.map((o) => (o.type === 'function_call' ? [o.call_id, o.name, o.arguments, o.status] : [o.type, 'status' in o ? o.status : undefined])),
      [
        ['message', 'completed'],
        ['c1', 'a', '{"x":1}', 'completed'],
        ['c2', 'b', '{}', 'completed'],
      ],
    );
    const done = events.filter((e) => e.event === 'response.function_call_arguments.done').map((e) => data<{ name: string; arguments: string }>(e));
    assert.deepEqual(
      done.map((d) => [d.name, d.arguments]),
      [
        ['a', '{"x":1}'],
        ['b', '{}'],
      ],
    );
  });

  it('a refusal is its own content part; the token limit ends in response.incomplete', async () => {
    const events = encode([chunk({ refusal: 'I cannot' }), chunk({ refusal: ' help.' }), chunk({}, 'length')]);
    assert.ok(types(events).includes('response.refusal.done'));
    assert.equal(events.at(-1)?.event, 'response.incomplete');
    const final = await accumulate(events);
    assert.equal(final.status, 'incomplete');
    assert.deepEqual(final.incomplete_details, { reason: 'max_output_tokens' });
    const message = final.output[0];
    assert.ok(message?.type === 'message');
    assert.deepEqual(
      message.content.map((part) => (part.type === 'refusal' ? part.refusal : part.type)),
      ['I cannot help.'],
    );
  });

  it('a failure after the first byte: response.failed with the same id and the error', async () => {
    const events = encode([chunk({ content: 'Hel' })], 'fail');
    const last = data<{ type: string; response: { id: string; status: string; error: unknown } }>(events.at(-1));
    assert.equal(last.type, 'response.failed');
    assert.equal(last.response.status, 'failed');
    assert.deepEqual(last.response.error, { code: 'server_error', message: 'upstream reset' });
    assert.equal(last.response.id, data<{ response: { id: string } }>(events[0]).response.id);
    const final = await accumulate(events);
    assert.equal(final.status, 'failed');
  });

  it('the JSON answer: reasoning, message and function_call items; a length stop is incomplete', () => {
    const { decoded } = decodeResponsesRequest({ model: 'm', input: 'hi', tools: [{ type: 'function', name: 'f' }] });
    const response = encodeResponsesResponse(
      {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 5,
        model: 'public-m',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hi', reasoning_content: 'hmm', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
            finish_reason: 'length',
          },
        ],
      },
      usage,
      decoded,
    );
    assert.equal(response.object, 'response');
    assert.equal(response.created_at, 5);
    assert.equal(response.status, 'incomplete');
    assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
    assert.deepEqual(
      response.output.map((o) => o.type),
      ['reasoning', 'message', 'function_call'],
    );
    assert.deepEqual(response.tools, [{ type: 'function', name: 'f', description: null, parameters: null, strict: null }]);
    assert.equal(response.usage?.total_tokens, 16);
  });
});
