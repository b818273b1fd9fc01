// Translates streamGenerateContent?alt=sse events (each a whole GenerateContentResponse slice)
// into OpenAI chunks, tracking per-candidate state; pure, no I/O.
import type { ChatChunk, ChatChunkChoice, ChatChunkDelta, FinishReason, Usage } from '../../protocol/chat-types.ts';
import { createCompletionId, nowSeconds } from '../create-ids.ts';
import { candidateIndex, findGeminiFailure, readCandidateParts } from './convert-gemini-response.ts';
import { convertGeminiUsage } from './convert-gemini-usage.ts';
import type { GeminiResponse, GeminiUsageMetadata } from './gemini-types.ts';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.ts';

interface CandidateState {
  toolCalls: number;
  finishReason: FinishReason | null;
  rawFinishReason: string | null;
}

/**
 * Gemini has no end sentinel: the stream is complete when every candidate has a finishReason.
 * usageMetadata is cumulative, so the last one wins.
 */
export class GeminiStreamTranslator {
  private readonly provider: string;
  private readonly sanitize: (text: string) => string;
  private readonly created = nowSeconds();
  private id: string | undefined;
  private model: string;
  private readonly candidates = new Map<number, CandidateState>();
  private usage: GeminiUsageMetadata | undefined;

  constructor(provider: string, upstreamModel: string, sanitize: (text: string) => string = (text) => text) {
    this.provider = provider;
    this.model = upstreamModel;
    this.sanitize = sanitize;
  }

  /** At least one candidate, and every candidate has finished. */
  get complete(): boolean {
    if (this.candidates.size === 0) return false;
    for (const state of this.candidates.values()) if (state.rawFinishReason === null) return false;
    return true;
  }

  get finishReason(): FinishReason | null {
    return this.first()?.finishReason ?? null;
  }

  get rawFinishReason(): string | null {
    return this.first()?.rawFinishReason ?? null;
  }

  get finalUsage(): Usage | undefined {
    return this.usage === undefined ? undefined : convertGeminiUsage(this.usage);
  }

  /** The chunk one event becomes, if any. Throws UpstreamError for a blocked prompt or bad call. */
  translate(response: GeminiResponse): ChatChunk | undefined {
    const failure = findGeminiFailure(response, this.provider, this.sanitize);
    if (failure !== undefined) throw failure;
    this.id ??= response.responseId ?? createCompletionId();
    if (response.modelVersion !== undefined) this.model = response.modelVersion;
    if (response.usageMetadata !== undefined) this.usage = response.usageMetadata;

    const choices: ChatChunkChoice[] = [];
    (response.candidates ?? []).forEach((candidate, position) => {
      const index = candidateIndex(candidate, position);
      let state = this.candidates.get(index);
      const delta: ChatChunkDelta = {};
      if (state === undefined) {
        state = { toolCalls: 0, finishReason: null, rawFinishReason: null };
        this.candidates.set(index, state);
        delta.role = 'assistant';
      }
      const { text, reasoning, toolCalls } = readCandidateParts(candidate.content?.parts);
      if (text !== '') delta.content = text;
      if (reasoning !== '') delta.reasoning_content = reasoning;
      if (toolCalls.length > 0) {
        delta.tool_calls = toolCalls.map((call) => ({ index: state.toolCalls++, ...call }));
      }
      let finish: FinishReason | null = null;
      if (candidate.finishReason !== undefined) {
        finish = mapGeminiFinishReason(candidate.finishReason, state.toolCalls > 0);
        state.finishReason = finish;
        state.rawFinishReason = candidate.finishReason;
      }
      if (Object.keys(delta).length > 0 || finish !== null) choices.push({ index, delta, finish_reason: finish });
    });
    if (choices.length === 0) return undefined;
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices };
  }

  private first(): CandidateState | undefined {
    return this.candidates.get(0) ?? this.candidates.values().next().value;
  }
}
