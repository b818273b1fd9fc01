// The reasoning table both ways: effort -> budget -> effort, budget ranges and their edges, and the intents
// each dialect's setting reads as (budget_tokens 0 and disabled are "off", never "not set").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatRequest } from '../../../src/gateway/protocol/chat-types.ts';
import {
  BUDGET_EFFORT_BOUNDS,
  EFFORT_BUDGETS,
  mapBudgetToEffort,
  mapEffortToAnthropic,
  mapEffortToBudget,
  mapEffortToOpenAI,
  MIN_THINKING_BUDGET,
  parseReasoningEffort,
  readReasoningIntent,
} from '../../../src/gateway/providers/map-reasoning-effort.ts';

const request = (fields: Partial<ChatRequest>): ChatRequest => ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...fields });

describe('map-reasoning-effort', () => {
  it('effort -> budget -> effort is stable for low, medium and high; minimal reads back as low, xhigh and max as high', () => {
    for (const effort of ['low', 'medium', 'high'] as const) assert.equal(mapBudgetToEffort(mapEffortToBudget(effort)), effort);
    assert.equal(mapBudgetToEffort(mapEffortToBudget('minimal')), 'low');
    assert.equal(mapBudgetToEffort(mapEffortToBudget('xhigh')), 'high');
    assert.equal(mapBudgetToEffort(mapEffortToBudget('max')), 'high');
    // Every budget Herd sends is one Anthropic takes.
    for (const budget of Object.values(EFFORT_BUDGETS)) assert.ok(budget >= MIN_THINKING_BUDGET);
  });

  it('budget ranges: 0 is off, the edges fall on the documented side', () => {
    assert.equal(mapBudgetToEffort(0), 'none');
    assert.equal(mapBudgetToEffort(1), 'low');
    assert.equal(mapBudgetToEffort(MIN_THINKING_BUDGET), 'low');
    assert.equal(mapBudgetToEffort(BUDGET_EFFORT_BOUNDS.medium - 1), 'low');
    assert.equal(mapBudgetToEffort(BUDGET_EFFORT_BOUNDS.medium), 'medium');
    assert.equal(mapBudgetToEffort(BUDGET_EFFORT_BOUNDS.high - 1), 'medium');
    assert.equal(mapBudgetToEffort(BUDGET_EFFORT_BOUNDS.high), 'high');
    // Claude Code's "ultrathink" budget.
    assert.equal(mapBudgetToEffort(31999), 'high');
  });

  it('effort names between vendors: minimal has no Anthropic level, max no OpenAI one', () => {
    assert.equal(mapEffortToAnthropic('minimal'), 'low');
    assert.equal(mapEffortToAnthropic('max'), 'max');
    assert.equal(mapEffortToOpenAI('max'), 'xhigh');
    assert.equal(mapEffortToOpenAI('none'), 'none');
    assert.equal(parseReasoningEffort('auto'), undefined);
    assert.equal(parseReasoningEffort('none'), 'none');
  });

  it('reads each dialect setting as an intent; thinking wins over an effort beside it only in kind', () => {
    assert.equal(readReasoningIntent(request({})), undefined);
    assert.deepEqual(readReasoningIntent(request({ reasoning_effort: 'none' })), { kind: 'off' });
    assert.deepEqual(readReasoningIntent(request({ reasoning_effort: 'high' })), { kind: 'effort', effort: 'high' });
    assert.equal(readReasoningIntent(request({ reasoning_effort: 'auto' })), undefined);
    assert.deepEqual(readReasoningIntent(request({ thinking: { type: 'disabled' } })), { kind: 'off' });
    // A zero budget is off, not "no setting".
    assert.deepEqual(readReasoningIntent(request({ thinking: { type: 'enabled', budget_tokens: 0 } })), { kind: 'off' });
    assert.deepEqual(readReasoningIntent(request({ thinking: { type: 'enabled', budget_tokens: 5000 } })), { kind: 'budget', budget: 5000 });
    assert.deepEqual(readReasoningIntent(request({ thinking: { type: 'enabled', budget_tokens: 5000 }, reasoning_effort: 'low' })), {
      kind: 'budget',
      budget: 5000,
      effort: 'low',
    });
    assert.deepEqual(readReasoningIntent(request({ thinking: { type: 'adaptive' } })), { kind: 'adaptive' });
    assert.deepEqual(readReasoningIntent(request({ thinking: { type: 'adaptive' }, reasoning_effort: 'max' })), { kind: 'adaptive', effort: 'max' });
    assert.deepEqual(readReasoningIntent(request({ thinking: { type: 'between_tools' } })), { kind: 'adaptive' });
    // Claude Code's subagents: thinking off with an effort beside it is off.
    assert.deepEqual(readReasoningIntent(request({ thinking: { type: 'disabled' }, reasoning_effort: 'max' })), { kind: 'off' });
  });
});
