// Watches a live stream on its way to the client and, if it completes, hands over the whole answer
// as a chat.completion — how a streaming miss gets stored. Cancelled or failed streams give nothing.
import type { ChatChunk, ChatResponse } from '../chat-types.ts';
import { convertUsageToOpenAI } from '../convert-usage-to-openai.ts';
import type { StreamRelay, StreamResult } from '../stream-relay.ts';
import { ChatResponseAssembler } from './assemble-chat-response.ts';

export interface StreamedAnswer {
  response: ChatResponse;
  result: StreamResult;
}

/**
 * The same relay, its chunks observed. `onComplete` runs after the stream completed (the lead's hook
 * evaluates the answer policy, waits for billing's cost, then stores); it is never called otherwise.
 * What it throws goes to `onError`.
 */
export function tapStreamForCache(relay: StreamRelay, onComplete: (answer: StreamedAnswer) => void, onError: (err: unknown) => void = () => undefined): StreamRelay {
  const assembler = new ChatResponseAssembler();
  void relay.result
    .then((result) => {
      if (result.outcome !== 'completed') return;
      // The usage chunk reaches the client only under include_usage; the result always has the usage.
      const response = assembler.build(convertUsageToOpenAI(result.usage));
      if (response instanceof Error) return;
      onComplete({ response, result });
    })
    .catch(onError); // a failing hook must not become an unhandled rejection (which ends the process)
  return { chunks: tapChunks(relay.chunks, assembler), cancel: relay.cancel, result: relay.result };
}

// A module-level generator with its inputs as arguments, not a closure: see stream-relay.ts.
async function* tapChunks(chunks: AsyncIterable<ChatChunk>, assembler: ChatResponseAssembler): AsyncGenerator<ChatChunk> {
  for await (const chunk of chunks) {
    assembler.add(chunk);
    yield chunk;
  }
}
