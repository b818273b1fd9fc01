// What a started stream hands its consumer: the pieces to forward, a way to stop, and how it ended.
import type { HerdError } from '../../core/errors.ts';
import type { FinishReason, Usage } from './chat-types.ts';
import type { StreamPiece } from './raw-sse.ts';

export type StreamOutcome = 'completed' | 'failed' | 'cancelled';

export interface StreamResult {
  outcome: StreamOutcome;
  /** The upstream's usage, or Herd's estimate of what was produced when it sent none (failed or cancelled streams). */
  usage: Usage;
  finishReason: FinishReason | null;
  rawFinishReason: string | null;
  /** Why a `failed` stream ended. */
  error?: HerdError;
  /** Chunks handed to the consumer (the usage chunk not counted; in raw pieces, the content events). */
  chunks: number;
  /** From the first chunk being ready to the end, ms. */
  streamMs: number;
}

export interface StreamRelay {
  /** Canonical chunks; RawSse pieces only for a caller that asked for its dialect's bytes (`passThrough`). */
  chunks: AsyncIterable<StreamPiece>;
  /** Stops the upstream and settles the stream as cancelled; safe to call at any time, and again. */
  cancel(): void;
  /** Settles when the stream ends, however it ends; never rejects. */
  result: Promise<StreamResult>;
}
