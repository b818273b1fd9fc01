// POST /v1/embeddings' entry point for the HTTP layer: handle(request, caller) runs the one gateway flow
// (ChatGateway.embed: admission, attempts, breakers and settlement shared with chat) and answers the vectors.
import type { HerdError } from '../../core/errors.ts';
import type { EmbeddingsRequest } from '../protocol/embeddings-request.ts';
import type { ChatGateway, EmbeddingsAnswer, GatewayCaller } from './chat-gateway.ts';

export type { EmbeddingsAnswer };

export class EmbeddingsGateway {
  constructor(private readonly flow: ChatGateway) {}

  /** Rejects with a HerdError (or the caller's abort reason), already recorded and counted. */
  handle(request: EmbeddingsRequest, caller: GatewayCaller): Promise<EmbeddingsAnswer> {
    return this.flow.embed(request, caller);
  }

  /** A request the transport refused before handle() (no valid key, a body that does not validate). */
  reportRefused(error: HerdError): void {
    this.flow.reportRefused(error, false, 'openai-embeddings');
  }

  /** The chat service owns the provider pools this flow uses: nothing of its own to close. */
  async close(): Promise<void> {}
}
