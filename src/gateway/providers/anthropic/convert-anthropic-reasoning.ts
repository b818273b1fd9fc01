// A bridged request's reasoning setting as Anthropic's thinking (and output_config.effort), by the table in
// map-reasoning-effort.ts, with the constraints Anthropic puts on thinking applied to the rest of the body.
import type { ChatMessage, ChatRequest } from '../../protocol/chat-types.ts';
import { mapEffortToAnthropic, mapEffortToBudget, MIN_THINKING_BUDGET, readReasoningIntent, type ReasoningEffort } from '../map-reasoning-effort.ts';
import type { ProviderWarning } from '../provider.ts';
import type { AnthropicRequest } from '../../wire/anthropic-messages/anthropic-types.ts';

/** Claude 4.6 and later think adaptively (budget_tokens is deprecated there and gone from 4.7). */
const ADAPTIVE_FROM = { major: 4, minor: 6 };
// claude-opus-4-6, claude-sonnet-4-5-20250929, claude-3-7-sonnet-20250219, anthropic.claude-opus-4-20250514-v1:0
const CLAUDE_VERSION = /claude-(?:[a-z]+-)?(\d+)(?:-(\d{1,2}))?(?=-|$|@|:)/;

/** Whether the model takes thinking {type: 'adaptive'}; an id Herd cannot read is taken as an older model (budgets work there). */
export function takesAdaptiveThinking(upstreamModel: string): boolean {
  const match = CLAUDE_VERSION.exec(upstreamModel);
  if (match === null) return false;
  const major = Number(match[1]);
  const minor = match[2] === undefined ? 0 : Number(match[2]);
  return major > ADAPTIVE_FROM.major || (major === ADAPTIVE_FROM.major && minor >= ADAPTIVE_FROM.minor);
}

export interface AnthropicReasoningContext {
  upstreamModel: string;
  /** The client's own max_tokens / max_completion_tokens, when it set one. */
  clientMaxTokens: number | undefined;
  defaultMaxTokens: number;
}

/** Sets body.thinking / body.output_config (and max_tokens, sampling) for the request's reasoning intent. */
export function convertAnthropicReasoning(request: ChatRequest, body: AnthropicRequest, context: AnthropicReasoningContext, warnings: ProviderWarning[]): void {
  if (request.thinking !== undefined) {
    // An Anthropic Messages client's own settings, as it sent them.
    body.thinking = request.thinking;
    const effort = request.reasoning_effort;
    if (effort !== undefined && effort !== 'none') body.output_config = { effort };
    return;
  }
  const intent = readReasoningIntent(request);
  if (intent === undefined) {
    if (request.reasoning_effort !== undefined) {
      warnings.push({ param: 'reasoning_effort', message: `Anthropic has no reasoning level '${request.reasoning_effort}'; it was not sent` });
    }
    return;
  }
  if (intent.kind === 'off') {
    body.thinking = { type: 'disabled' };
    return;
  }
  // Only effort intents reach here: budget and adaptive come with `thinking`, which returned above.
  const effort = intent.effort ?? 'medium';
  const blocked = findThinkingBlocker(request);
  if (blocked !== undefined) {
    warnings.push({ param: 'reasoning_effort', message: `${blocked}; Anthropic thinking was not turned on for this request` });
    return;
  }
  if (takesAdaptiveThinking(context.upstreamModel)) {
    body.thinking = { type: 'adaptive' };
    body.output_config = { effort: mapEffortToAnthropic(effort) };
    // max_tokens counts thinking here too: without the client's own cap, room for the effort's budget.
    if (context.clientMaxTokens === undefined) body.max_tokens = context.defaultMaxTokens + mapEffortToBudget(effort);
  } else if (!setThinkingBudget(body, effort, context, warnings)) return;
  dropSamplingThinkingRefuses(body, warnings);
}

/**
 * A thinking budget within max_tokens (which counts thinking too). A client's max_tokens is a cap Herd keeps:
 * the budget is at most half of it. Without one, max_tokens is the default answer room plus the budget.
 */
function setThinkingBudget(body: AnthropicRequest, effort: Exclude<ReasoningEffort, 'none'>, context: AnthropicReasoningContext, warnings: ProviderWarning[]): boolean {
  let budget = mapEffortToBudget(effort);
  if (context.clientMaxTokens === undefined) {
    body.max_tokens = context.defaultMaxTokens + budget;
  } else {
    if (context.clientMaxTokens <= MIN_THINKING_BUDGET) {
      warnings.push({
        param: 'reasoning_effort',
        message: `max_tokens ${context.clientMaxTokens} leaves no room for Anthropic's smallest thinking budget (${MIN_THINKING_BUDGET}); thinking was not turned on`,
      });
      return false;
    }
    budget = Math.max(MIN_THINKING_BUDGET, Math.min(budget, Math.floor(context.clientMaxTokens / 2)));
  }
  body.thinking = { type: 'enabled', budget_tokens: budget };
  return true;
}

/** Why thinking cannot be turned on for this request, if it cannot. */
function findThinkingBlocker(request: ChatRequest): string | undefined {
  const choice = request.tool_choice;
  if (choice === 'required' || (typeof choice === 'object' && choice !== null)) {
    return 'Anthropic cannot think while a tool call is forced (tool_choice)';
  }
  if (ongoingTurnLacksSignature(request.messages)) {
    return 'the assistant turn in progress carries no signed thinking, which Anthropic requires once thinking is on';
  }
  return undefined;
}

/**
 * With thinking on, Anthropic wants the last assistant message of a turn still in progress (followed only by
 * tool results, or a prefill) to start with its signed thinking block. OpenAI clients rarely replay one.
 */
function ongoingTurnLacksSignature(messages: ChatMessage[]): boolean {
  let last = messages.length - 1;
  while (last >= 0 && messages[last]?.role === 'tool') last--;
  const message = messages[last];
  if (message?.role !== 'assistant') return false;
  return message.reasoning_signature === undefined || message.reasoning_signature === '' || message.reasoning_content === undefined;
}

/** Anthropic refuses temperature and top_k with thinking, and top_p under 0.95; the client asked to reason, so they give way. */
function dropSamplingThinkingRefuses(body: AnthropicRequest, warnings: ProviderWarning[]): void {
  if (body.temperature !== undefined && body.temperature !== 1) {
    delete body.temperature;
    warnings.push({ param: 'temperature', message: 'Anthropic takes no temperature with thinking on; it was not sent' });
  }
  if (body.top_k !== undefined) {
    delete body.top_k;
    warnings.push({ param: 'top_k', message: 'Anthropic takes no top_k with thinking on; it was not sent' });
  }
  if (body.top_p !== undefined && body.top_p < 0.95) {
    delete body.top_p;
    warnings.push({ param: 'top_p', message: 'Anthropic takes top_p only from 0.95 to 1 with thinking on; it was not sent' });
  }
}
