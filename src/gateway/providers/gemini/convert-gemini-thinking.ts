// A bridged request's reasoning setting as Gemini's generationConfig.thinkingConfig, by the table in
// map-reasoning-effort.ts: thinkingLevel for Gemini 3, thinkingBudget for 2.5 and the rest.
import type { ChatRequest } from '../../protocol/chat-types.ts';
import { mapBudgetToEffort, mapEffortToBudget, readReasoningIntent, type ReasoningEffort } from '../map-reasoning-effort.ts';
import type { ProviderWarning } from '../provider.ts';
import type { GeminiThinkingConfig } from '../../wire/gemini/gemini-types.ts';

type Effort = Exclude<ReasoningEffort, 'none'>;
type GeminiLevel = 'minimal' | 'low' | 'medium' | 'high';

const GEMINI_3 = /^(models\/)?gemini-3[.-]/;
const PRO = /-pro\b/;
/** Gemini 3 Pro (not 3.1) has low and high only. */
const GEMINI_3_0_PRO = /^(models\/)?gemini-3-pro\b/;
/** thinkingBudget -1: the model decides how much to think. */
export const GEMINI_DYNAMIC_BUDGET = -1;
// Largest budgets Gemini 2.5 takes (Pro 32768, Flash and Flash-Lite 24576); Pro cannot go below 128 (or to 0).
const MAX_BUDGET = { pro: 32768, other: 24576 };
const MIN_PRO_BUDGET = 128;

/** The thinkingConfig for the request's reasoning intent; undefined when it asked nothing of reasoning. */
export function convertGeminiThinking(request: ChatRequest, upstreamModel: string, warnings: ProviderWarning[]): GeminiThinkingConfig | undefined {
  const intent = readReasoningIntent(request);
  const param = request.thinking !== undefined ? 'thinking' : 'reasoning_effort';
  if (intent === undefined) {
    if (request.reasoning_effort !== undefined) warnings.push({ param, message: `Gemini has no reasoning level '${request.reasoning_effort}'; it was not sent` });
    return undefined;
  }
  const pro = PRO.test(upstreamModel);
  if (GEMINI_3.test(upstreamModel)) {
    if (intent.kind === 'off') {
      const level: GeminiLevel = pro ? 'low' : 'minimal';
      warnings.push({ param, message: `Gemini 3 cannot turn thinking off; sent its lowest level '${level}'` });
      return { thinkingLevel: level };
    }
    const effort = intent.kind === 'budget' ? (intent.effort ?? budgetEffort(intent.budget)) : intent.effort;
    // Adaptive without an effort: Gemini 3's own dynamic default.
    if (effort === undefined) return { includeThoughts: true };
    return { thinkingLevel: mapEffortToGeminiLevel(effort, upstreamModel, param, warnings), includeThoughts: true };
  }
  const max = pro ? MAX_BUDGET.pro : MAX_BUDGET.other;
  if (intent.kind === 'off') {
    if (!pro) return { thinkingBudget: 0 };
    warnings.push({ param, message: `${upstreamModel} cannot turn thinking off; sent its smallest budget ${MIN_PRO_BUDGET}` });
    return { thinkingBudget: MIN_PRO_BUDGET };
  }
  let budget: number;
  if (intent.kind === 'budget') budget = intent.effort === undefined ? intent.budget : mapEffortToBudget(intent.effort);
  else if (intent.effort === undefined) return { thinkingBudget: GEMINI_DYNAMIC_BUDGET, includeThoughts: true };
  else budget = mapEffortToBudget(intent.effort);
  // maxOutputTokens counts thinking too: a client's cap keeps at least half for the answer.
  const clientMax = request.max_completion_tokens ?? request.max_tokens;
  if (clientMax !== undefined) budget = Math.min(budget, Math.floor(clientMax / 2));
  budget = Math.max(pro ? MIN_PRO_BUDGET : 1, Math.min(budget, max));
  return { thinkingBudget: budget, includeThoughts: true };
}

function budgetEffort(budget: number): Effort {
  const effort = mapBudgetToEffort(budget);
  return effort === 'none' ? 'low' : effort;
}

/** Gemini 3's levels: minimal (Flash only), low, medium (not on 3 Pro), high (the top). */
export function mapEffortToGeminiLevel(effort: Effort, upstreamModel: string, param: string, warnings: ProviderWarning[]): GeminiLevel {
  let level: GeminiLevel = effort === 'xhigh' || effort === 'max' ? 'high' : effort;
  if (level === 'minimal' && PRO.test(upstreamModel)) level = 'low';
  if (level === 'medium' && GEMINI_3_0_PRO.test(upstreamModel)) level = 'high';
  if (level !== effort) warnings.push({ param, message: `${upstreamModel} has no thinking level '${effort}'; sent '${level}'` });
  return level;
}
