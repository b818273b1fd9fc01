// An Anthropic Messages client's thinking as OpenAI's reasoning_effort, by the table in map-reasoning-effort.ts.
// Only a request carrying `thinking` is touched: an OpenAI client's own reasoning_effort goes up as it sent it.
import type { ChatRequest } from '../../protocol/chat-types.ts';
import { mapBudgetToEffort, mapEffortToOpenAI, readReasoningIntent } from '../map-reasoning-effort.ts';
import type { ProviderWarning } from '../provider.ts';

export interface OpenAIReasoning {
  /** The reasoning_effort to send; undefined sends none (the model's default). */
  effort: string | undefined;
  warnings: ProviderWarning[];
}

/** undefined when the request has no thinking, and its reasoning_effort (if any) goes up unchanged. */
export function convertOpenAIReasoning(request: ChatRequest): OpenAIReasoning | undefined {
  if (request.thinking === undefined) return undefined;
  const intent = readReasoningIntent(request);
  switch (intent?.kind) {
    case undefined:
      return { effort: undefined, warnings: [] };
    case 'off':
      // 'none' exists only from gpt-5.1 on, and models without reasoning refuse reasoning_effort altogether.
      return {
        effort: undefined,
        warnings: [{ param: 'thinking', message: "OpenAI-compatible models turn reasoning off in different ways ('none' only from gpt-5.1); the model's default applies" }],
      };
    case 'adaptive':
      // "The model decides" is what sending no effort means.
      return intent.effort === undefined ? { effort: undefined, warnings: [] } : fromEffort(intent.effort);
    case 'effort':
      return fromEffort(intent.effort);
    case 'budget':
      return intent.effort === undefined ? { effort: mapBudgetToEffort(intent.budget), warnings: [] } : fromEffort(intent.effort);
  }
}

function fromEffort(effort: string): OpenAIReasoning {
  if (effort !== 'max') return { effort, warnings: [] };
  return { effort: mapEffortToOpenAI(effort), warnings: [{ param: 'output_config.effort', message: "OpenAI has no effort 'max'; sent as 'xhigh', its highest" }] };
}
