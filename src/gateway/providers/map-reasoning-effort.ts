// The one table between the dialects' reasoning settings: OpenAI's reasoning_effort (and Anthropic's
// output_config.effort, decoded into it), Anthropic's thinking budget, Gemini's thinkingBudget/Level.
// Pure functions; each provider's convert-*-reasoning.ts applies them (docs/gateway.md, "Reasoning across dialects").
import type { ChatRequest } from '../protocol/chat-types.ts';

/** OpenAI's effort names, plus Anthropic's `max`. `none` is "off", never the same as absent. */
export type ReasoningEffort = 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';

const EFFORTS: ReadonlySet<string> = new Set<ReasoningEffort>(['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']);

export function parseReasoningEffort(value: string | undefined): ReasoningEffort | undefined {
  return value !== undefined && EFFORTS.has(value) ? (value as ReasoningEffort) : undefined;
}

/**
 * What the client asked of reasoning, whatever dialect it spoke: nothing (undefined), off, a level, a token
 * budget, or "the model decides" (Anthropic's adaptive, optionally steered by an effort).
 */
export type ReasoningIntent =
  | { kind: 'off' }
  | { kind: 'effort'; effort: Exclude<ReasoningEffort, 'none'> }
  | { kind: 'budget'; budget: number; effort?: Exclude<ReasoningEffort, 'none'> }
  | { kind: 'adaptive'; effort?: Exclude<ReasoningEffort, 'none'> };

/** The request's reasoning intent; thinking (Anthropic's own setting) wins over an effort beside it. */
export function readReasoningIntent(request: ChatRequest): ReasoningIntent | undefined {
  const parsed = parseReasoningEffort(request.reasoning_effort);
  const effort = parsed === 'none' ? undefined : parsed;
  const thinking = request.thinking;
  if (thinking === undefined) {
    if (parsed === 'none') return { kind: 'off' };
    return effort === undefined ? undefined : { kind: 'effort', effort };
  }
  switch (thinking.type) {
    case 'disabled':
      return { kind: 'off' };
    case 'enabled':
      // A zero budget is "off": a truthy check would have read it as "not set".
      if (thinking.budget_tokens <= 0) return { kind: 'off' };
      return effort === undefined ? { kind: 'budget', budget: thinking.budget_tokens } : { kind: 'budget', budget: thinking.budget_tokens, effort };
    case 'adaptive':
    case 'between_tools':
      return effort === undefined ? { kind: 'adaptive' } : { kind: 'adaptive', effort };
  }
}

/** Anthropic refuses a thinking budget under this. */
export const MIN_THINKING_BUDGET = 1024;

/**
 * Effort -> thinking budget (Anthropic budget_tokens, Gemini 2.5 thinkingBudget). Each level is a point
 * inside the range that maps back to it (budgetToEffort), so effort -> budget -> effort is stable for
 * low, medium and high. high stays under 32k with room for the answer: older Claude models cap output there.
 */
export const EFFORT_BUDGETS: Readonly<Record<Exclude<ReasoningEffort, 'none'>, number>> = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 24576,
  xhigh: 32000,
  max: 32000,
};

/** Budget ranges back to an effort: [1, 4096) low, [4096, 16384) medium, 16384 and up high; 0 is off. */
export const BUDGET_EFFORT_BOUNDS = { medium: 4096, high: 16384 } as const;

export function mapEffortToBudget(effort: Exclude<ReasoningEffort, 'none'>): number {
  return EFFORT_BUDGETS[effort];
}

/**
 * A budget as the effort every OpenAI reasoning model accepts (low, medium, high: minimal and xhigh are
 * model-specific), or none for 0.
 */
export function mapBudgetToEffort(budget: number): 'none' | 'low' | 'medium' | 'high' {
  if (budget <= 0) return 'none';
  if (budget < BUDGET_EFFORT_BOUNDS.medium) return 'low';
  if (budget < BUDGET_EFFORT_BOUNDS.high) return 'medium';
  return 'high';
}

/** Anthropic's output_config.effort has low, medium, high, xhigh and max; minimal has no place there. */
export function mapEffortToAnthropic(effort: Exclude<ReasoningEffort, 'none'>): 'low' | 'medium' | 'high' | 'xhigh' | 'max' {
  return effort === 'minimal' ? 'low' : effort;
}

/** OpenAI has no `max`; xhigh is its highest level. */
export function mapEffortToOpenAI(effort: ReasoningEffort): Exclude<ReasoningEffort, 'max'> {
  return effort === 'max' ? 'xhigh' : effort;
}
