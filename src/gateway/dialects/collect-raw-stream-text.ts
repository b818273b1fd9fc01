// The completion text a pass-through stream carried, read back from its raw SSE pieces: the estimate's
// input when a stream ends without the upstream's usage (failed, cancelled, or a server that sends none).
// One reader per dialect that has pass-through; each reads only when an estimate is needed.
import { HerdError } from '../../core/errors.ts';
import type { IngressDialect } from '../ingress-dialect.ts';
import { CompletionTextCollector } from '../usage-estimate.ts';
import { parseChatSseChunks } from './openai-chat/parse-chat-sse-chunks.ts';

export function collectRawStreamText(dialect: IngressDialect, texts: readonly string[]): string {
  switch (dialect) {
    case 'openai-chat': {
      const collector = new CompletionTextCollector();
      for (const chunk of parseChatSseChunks(texts)) collector.addChunk(chunk);
      return collector.text();
    }
    default:
      throw new HerdError('INTERNAL', `no reader for ${dialect} pass-through streams`);
  }
}
