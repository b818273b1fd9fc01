// planBudgets: which rules apply (key, team, per-model), and calendar buckets aligned in the owner's
// IANA zone — day, ISO week from Monday, month — with resetsAt the next boundary, DST included.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { calendarBucket, matchesModelPattern, planBudgets } from '../../../src/gateway/billing/plan-budgets.ts';
import { testKey, testTeam } from './budget-fixtures.ts';

const iso = (ms: number) => new Date(ms).toISOString();

test('UTC buckets keep the format spend was recorded under before zones (d:YYYY-MM-DD, m:YYYY-MM)', () => {
  const at = Date.parse('2026-12-06T23:59:59.999Z');
  assert.deepEqual(calendarBucket('day', at, 'UTC'), { bucket: 'd:2026-12-06', resetsAt: Date.parse('2026-12-07T00:00:00Z') });
  assert.deepEqual(calendarBucket('month', at, 'UTC'), { bucket: 'm:2026-12', resetsAt: Date.parse('2027-01-01T00:00:00Z') });
  // 2026-12-06 is a Sunday: the ISO week (Monday-based) ends at the next midnight.
  assert.deepEqual(calendarBucket('week', at, 'UTC'), { bucket: 'w:2026-W49', resetsAt: Date.parse('2026-12-07T00:00:00Z') });
  assert.equal(calendarBucket('week', Date.parse('2026-12-07T00:00:00Z'), 'UTC').bucket, 'w:2026-W50', 'Monday starts the next week');
});

test('ISO weeks at year ends: the week belongs to the year of its Thursday', () => {
  assert.equal(calendarBucket('week', Date.parse('2027-01-01T12:00:00Z'), 'UTC').bucket, 'w:2026-W53', 'Fri 2027-01-01 is in 2026-W53');
  assert.equal(calendarBucket('week', Date.parse('2025-12-29T12:00:00Z'), 'UTC').bucket, 'w:2026-W01', 'Mon 2025-12-29 starts 2026-W01');
  assert.equal(calendarBucket('week', Date.parse('2021-01-03T12:00:00Z'), 'UTC').bucket, 'w:2020-W53');
});

test("buckets follow the owner's zone: Asia/Shanghai's day starts at 16:00 UTC the day before", () => {
  const zone = 'Asia/Shanghai';
  const before = Date.parse('2026-12-06T15:59:59Z');
  const after = Date.parse('2026-12-06T16:00:00Z');
  assert.deepEqual(calendarBucket('day', before, zone), { bucket: 'd:2026-12-06@Asia/Shanghai', resetsAt: after });
  assert.deepEqual(calendarBucket('day', after, zone), { bucket: 'd:2026-12-07@Asia/Shanghai', resetsAt: Date.parse('2026-12-07T16:00:00Z') });
  assert.deepEqual(calendarBucket('month', Date.parse('2026-12-31T16:30:00Z'), zone), { bucket: 'm:2027-01@Asia/Shanghai', resetsAt: Date.parse('2027-01-31T16:00:00Z') });
  assert.equal(calendarBucket('week', after, zone).bucket, 'w:2026-W50@Asia/Shanghai', 'already Monday in Shanghai');
});

test('DST: a day of 23 or 25 hours ends at local midnight; a zone whose clocks jump at midnight starts the day at the jump', () => {
  const ny = 'America/New_York';
  // 2026-03-08: clocks go 02:00 → 03:00 (23 h). Midnight EST = 05:00Z; the next midnight is EDT = 04:00Z on the 9th.
  assert.equal(iso(calendarBucket('day', Date.parse('2026-03-08T12:00:00Z'), ny).resetsAt), '2026-03-09T04:00:00.000Z');
  // 2026-11-01: 02:00 → 01:00 (25 h): the next midnight is EST again.
  assert.equal(iso(calendarBucket('day', Date.parse('2026-11-01T12:00:00Z'), ny).resetsAt), '2026-11-02T05:00:00.000Z');
  assert.equal(iso(calendarBucket('month', Date.parse('2026-10-15T12:00:00Z'), ny).resetsAt), '2026-11-01T04:00:00.000Z', 'November starts under EDT');
  // America/Santiago moves from -04 to -03 at 24:00 on 2026-09-05: 2026-09-06 begins at 01:00 local, 04:00Z.
  const santiago = calendarBucket('day', Date.parse('2026-09-05T12:00:00Z'), 'America/Santiago');
  assert.equal(iso(santiago.resetsAt), '2026-09-06T04:00:00.000Z');
  assert.equal(calendarBucket('day', santiago.resetsAt, 'America/Santiago').bucket, 'd:2026-09-06@America/Santiago');
  assert.equal(calendarBucket('day', santiago.resetsAt - 1, 'America/Santiago').bucket, 'd:2026-09-05@America/Santiago');
});

test('the key, its team, and per-model rules only for a matching model (all of them without a model)', () => {
  const team = testTeam({ budgets: [{ period: 'month', amountMicros: 9_000_000 }], timezone: 'Europe/Berlin', alertThresholds: [90] });
  const key = testKey({
    id: 'hk_a',
    team,
    timezone: 'Asia/Shanghai',
    budgets: [
      { period: 'day', amountMicros: 100_000_000 },
      { period: 'week', amountMicros: 5_000_000, model: 'gpt-4o*' },
    ],
  });
  const at = Date.parse('2026-12-06T10:00:00Z');
  const summary = (model?: string) => planBudgets(key, at, model, { defaultThresholds: [50, 80, 100] }).map((l) => [l.subject, l.bucket, l.owner.name, l.thresholds.join('/')]);
  assert.deepEqual(summary('gpt-4o-mini'), [
    ['hk_a', 'd:2026-12-06@Asia/Shanghai', 'team-a', '50/80/100'],
    ['hk_a#gpt-4o*', 'w:2026-W49@Asia/Shanghai', 'team-a', '50/80/100'],
    ['team:tm_research', 'm:2026-12@Europe/Berlin', 'research', '90'],
  ]);
  assert.deepEqual(
    summary('claude-sonnet').map((l) => l[0]),
    ['hk_a', 'team:tm_research'],
  );
  assert.equal(summary(undefined).length, 3, '/v1/me lists every rule');
  assert.ok(matchesModelPattern('gpt-4o*', 'gpt-4o') && !matchesModelPattern('gpt-4o*', 'gpt-4.1') && matchesModelPattern('a.b', 'a.b') && !matchesModelPattern('a.b', 'axb'));
});
