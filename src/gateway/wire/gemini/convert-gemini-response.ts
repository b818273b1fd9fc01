// Gemini GenerateContentResponse -> OpenAI shapes: each candidate becomes a choice; text parts become
// content, thought parts reasoning_content, functionCall parts tool_calls (Gemini sends whole calls).
import type { ChatResponse, ChatResponseMessage, ToolCall } from '../../protocol/chat-types.ts';
import { isJsonObject } from '../../protocol/check-json-value.ts';
import { createCompletionId, createToolCallId, nowSeconds } from '../create-ids.ts';
import { UpstreamError } from '../../protocol/upstream-error.ts';
import type { GeminiCandidate, GeminiPart, GeminiResponse } from './gemini-types.ts';
import { MALFORMED_FINISH_REASONS, mapGeminiFinishReason } from './map-gemini-finish-reason.ts';

export interface CandidateContent {
  text: string;
  reasoning: string;
  toolCalls: ToolCall[];
}

export function isGeminiResponse(body: unknown): body is GeminiResponse {
  return isJsonObject(body) && (body.candidates === undefined || (Array.isArray(body.candidates) && body.candidates.every(isJsonObject)));
}

export function readCandidateParts(parts: GeminiPart[] | undefined): CandidateContent {
  const content: CandidateContent = { text: '', reasoning: '', toolCalls: [] };
  for (const part of parts ?? []) {
    if (part.functionCall !== undefined) {
      content.toolCalls.push({
        id: part.functionCall.id ?? createToolCallId(),
        type: 'function',
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      });
    } else if (typeof part.text === 'string') {
      if (part.thought === true) content.reasoning += part.text;
      else content.text += part.text;
    }
  }
  return content;
}

/** The error a response stands for, if any: a blocked prompt, or an unusable function call. */
export function findGeminiFailure(response: GeminiResponse, provider: string, sanitize: (text: string) => string): UpstreamError | undefined {
  const blockReason = response.promptFeedback?.blockReason;
  if (blockReason !== undefined && (response.candidates === undefined || response.candidates.length === 0)) {
    const detail = response.promptFeedback?.blockReasonMessage;
    return new UpstreamError(`${provider}: upstream blocked the prompt (${sanitize(blockReason)})${detail ? `: ${sanitize(detail)}` : ''}`, {
      provider,
      failure: 'content_filter',
      upstreamType: blockReason,
    });
  }
  const malformed = response.candidates?.find((c) => c.finishReason !== undefined && MALFORMED_FINISH_REASONS.has(c.finishReason));
  if (malformed !== undefined) {
    return new UpstreamError(`${provider}: the model produced an unusable function call (${malformed.finishReason})`, {
      provider,
      failure: 'malformed',
      upstreamType: malformed.finishReason,
    });
  }
  return undefined;
}

export function candidateIndex(candidate: GeminiCandidate, position: number): number {
  return typeof candidate.index === 'number' ? candidate.index : position;
}

/** Usage is left to the caller (it may have to be estimated). */
export function convertGeminiResponse(response: GeminiResponse, fallbackModel: string): ChatResponse {
  return {
    id: response.responseId ?? createCompletionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model: response.modelVersion ?? fallbackModel,
    choices: (response.candidates ?? []).map((candidate, position) => {
      const { text, reasoning, toolCalls } = readCandidateParts(candidate.content?.parts);
      const message: ChatResponseMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
      if (toolCalls.length > 0) message.tool_calls = toolCalls;
      if (reasoning !== '') message.reasoning_content = reasoning;
      const finish = candidate.finishReason === undefined ? 'stop' : mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0);
      return { index: candidateIndex(candidate, position), message, finish_reason: finish, logprobs: null };
    }),
  };
}
