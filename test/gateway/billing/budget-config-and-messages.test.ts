// billing.alerts and default_max_output_tokens in herd.yaml (bad values at their file:line:column), and the
// BUDGET_EXCEEDED messages: the owner's name, exact sub-cent amounts, when the period resets in its zone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import type { HerdError } from '../../../src/core/errors.ts';
import { BudgetExceededError, formatExactAmount } from '../../../src/gateway/billing/check-budgets.ts';
import { planBudgets } from '../../../src/gateway/billing/plan-budgets.ts';
import { testKey, testTeam } from './budget-fixtures.ts';

const MODELS = `providers:
  openai: { type: openai }
models:
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments: [{ provider: openai }]
`;

const errorOf = (yaml: string): string => {
  try {
    parseHerdConfig(yaml, 'h.yaml');
  } catch (err) {
    return (err as HerdError).message;
  }
  return '';
};

test('billing.alerts and max_output_tokens load; bad values are named at their line and column', () => {
  const config = parseHerdConfig(
    `${MODELS}    max_output_tokens: 16384
billing:
  default_max_output_tokens: 8192
  alerts: { webhook_url: "https://hooks.example.com/b", secret_env: HERD_ALERT_SECRET, thresholds: [75, 100] }
`,
    'h.yaml',
  );
  assert.equal(config.models['gpt-4.1']?.max_output_tokens, 16_384);
  assert.equal(config.billing.default_max_output_tokens, 8_192);
  assert.deepEqual([config.billing.alerts.thresholds, config.billing.alerts.lease_ms, config.billing.alerts.max_attempts], [[75, 100], 30_000, 8]);
  assert.match(errorOf(`${MODELS}billing:\n  alerts:\n    webhook_url: "ftp://x"\n`), /^h\.yaml:9:18: billing\.alerts\.webhook_url: must be an http\(s\) URL/);
  assert.match(errorOf(`${MODELS}billing:\n  alerts:\n    thresholds: [80, 0]\n`), /^h\.yaml:9:22: billing\.alerts\.thresholds\[1\]/);
  assert.match(
    errorOf(`${MODELS}billing:\n  alerts:\n    webhook_url: "http://127.0.0.1:9/h"\n    timeout_ms: 5000\n    lease_ms: 5000\n`),
    /h\.yaml:11:15: billing\.alerts\.lease_ms: must exceed timeout_ms \(5000\)/,
  );
  assert.match(errorOf(`${MODELS}billing:\n  alerts: { secret_env: "not a name" }\n`), /billing\.alerts\.secret_env: must be an environment variable name/);
});

test('refusals name the owner, show exact amounts, and say when the period resets in its zone', () => {
  const at = Date.parse('2026-12-06T10:00:00Z');
  const team = testTeam({ budgets: [{ period: 'month', amountMicros: 5_000_000_000 }], timezone: 'Europe/Berlin' });
  const key = testKey({
    team,
    timezone: 'Asia/Shanghai',
    budgets: [
      { period: 'day', amountMicros: 100_000_000 },
      { period: 'week', amountMicros: 5_000, model: 'gpt-4o*' },
    ],
  });
  const [day, perModel, month] = planBudgets(key, at, 'gpt-4o-mini');
  assert.ok(day && perModel && month);
  assert.equal(
    new BudgetExceededError({ line: day, spentMicros: 100_020_000, estimateMicros: 4_200, currency: 'CNY' }).message,
    'budget ¥100.00 per day for key team-a is spent (¥100.02); it resets at 00:00 Asia/Shanghai',
  );
  assert.equal(
    new BudgetExceededError({ line: perModel, spentMicros: 4_000, estimateMicros: 4_200, currency: 'CNY' }).message,
    'this request may cost up to ¥0.0042 and budget ¥0.005 per week for model gpt-4o* for key team-a has ¥0.001 left; it resets at Mon 2026-12-07 00:00 Asia/Shanghai. Send a smaller max_tokens to fit it',
  );
  assert.equal(
    new BudgetExceededError({ line: month, spentMicros: 5_000_312_345, estimateMicros: 1, currency: 'USD' }).message,
    'budget $5,000.00 per month for team research is spent ($5,000.312345); it resets at Fri 2027-01-01 00:00 Europe/Berlin',
  );
  assert.deepEqual(
    [0, 1, 10_000, 4_200, 1_234_567_890].map((m) => formatExactAmount(m, 'CNY')),
    ['¥0.00', '¥0.000001', '¥0.01', '¥0.0042', '¥1,234.56789'],
  );
});
