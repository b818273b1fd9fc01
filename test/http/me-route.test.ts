// GET /v1/me: a key reads itself — team, role, limits, models, every budget (its own, per model, its
// team's) with spend, remaining and reset time from planBudgets and the ledger — and nothing else;
// errors in OpenAI's shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planBudgets } from '../../src/gateway/billing/plan-budgets.ts';
import { bearer, setupAdmin } from './admin-test-setup.ts';

const CLI = { actor: { id: 'cli@test', name: 'cli@test', role: 'admin' as const } };

test('/v1/me shows the key, its limits and each budget with spend, remaining and reset time', async () => {
  const now = Date.parse('2026-12-06T15:30:00Z');
  const s = await setupAdmin({ now: () => now });
  try {
    await s.store.createTeam({ name: 'team-a', budgets: [{ period: 'month', amountMicros: 100_000_000 }], rpm: 500 }, CLI);
    const { key, secret } = await s.store.createKey(
      {
        name: 'alice',
        team: 'team-a',
        allowedModels: ['gpt-4o*'],
        rpm: 60,
        budgets: [
          { period: 'day', amountMicros: 10_000_000 },
          { period: 'day', amountMicros: 2_000_000, model: 'gpt-4o*' },
        ],
        timezone: 'Asia/Shanghai',
        tags: ['research'],
        expiresAt: Date.parse('2027-01-01T00:00:00Z'),
      },
      CLI,
    );
    const info = await s.store.findKey(key.id);
    await s.ledger.reserve({ keyId: key.id, requestId: 'r1', estimateMicros: 1_000_000, lines: planBudgets(info, now, 'gpt-4o'), atMs: now });
    await s.ledger.settle('r1', { costMicros: 750_000 });

    const res = await s.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(secret) });
    assert.equal(res.statusCode, 200, res.body);
    const me = res.json();
    assert.deepEqual(
      { id: me.id, name: me.name, role: me.role, team: me.team, allowed: me.allowed_models, limits: me.limits, team_limits: me.team_limits, expires: me.expires_at, tags: me.tags },
      {
        id: key.id,
        name: 'alice',
        role: 'client',
        team: { id: info.team?.id, name: 'team-a' },
        allowed: ['gpt-4o*'],
        limits: { rpm: 60, tpm: null, max_concurrency: null, priority: null },
        team_limits: { rpm: 500, tpm: null, max_concurrency: null },
        expires: '2027-01-01T00:00:00.000Z',
        tags: ['research'],
      },
    );
    const budgets = me.budgets.map((b: Record<string, unknown>) => [b.owner && (b.owner as { kind: string }).kind, b.period, b.model, b.spent, b.remaining, b.resets_at]);
    assert.deepEqual(budgets, [
      // 15:30 UTC is 23:30 in Shanghai: the day resets at 16:00 UTC.
      ['key', 'day', null, '0.75', '9.25', '2026-12-06T16:00:00.000Z'],
      ['key', 'day', 'gpt-4o*', '0.75', '1.25', '2026-12-06T16:00:00.000Z'],
      ['team', 'month', null, '0.75', '99.25', '2027-01-01T00:00:00.000Z'],
    ]);
    assert.equal(me.currency, 'CNY');
    assert.ok(!res.body.includes(secret), 'never the secret');

    const none = await s.app.inject({ method: 'GET', url: '/v1/me' });
    assert.equal(none.statusCode, 401);
    assert.deepEqual(Object.keys(none.json().error).sort(), ['code', 'message', 'param', 'type']);
  } finally {
    await s.close();
  }
});
