// The audit aggregator: events of one (actor or source address, action, object) in one minute become one
// row with a count, written when the minute ends (or at close); past maxEntries distinct sources the rest
// of the minute folds into one row per action, so a flood cannot grow memory or the table without bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AuditAggregator } from '../../../src/gateway/admin/audit-aggregator.ts';
import type { AuditEventInput, ChangeContext } from '../../../src/gateway/keys/key-store.ts';

function fakeStore() {
  const rows: { event: AuditEventInput; ctx: ChangeContext }[] = [];
  return {
    rows,
    appendAudit: async (events: readonly AuditEventInput[], ctx: ChangeContext) => {
      for (const event of events) rows.push({ event, ctx });
    },
  };
}

const anonymous = (ip: string): ChangeContext => ({ actor: { id: 'anonymous', name: 'anonymous', role: 'client' }, sourceIp: ip });
const key = (id: string): ChangeContext => ({ actor: { id, name: id, role: 'admin' }, sourceIp: '10.0.0.1' });

test('one row per (who, action, object) per minute, written at the minute end and at close', async () => {
  let now = Date.parse('2026-12-06T10:00:05Z');
  const store = fakeStore();
  const audit = new AuditAggregator({ store, now: () => now, timer: false });
  for (let i = 0; i < 50; i++) audit.record({ action: 'admin.sign_in_failed', object: 'admin' }, anonymous('203.0.113.9'));
  audit.record({ action: 'admin.sign_in_failed', object: 'admin' }, anonymous('198.51.100.1'));
  for (let i = 0; i < 3; i++) audit.record({ action: 'admin.sign_in', object: 'admin' }, key('hk_a'));
  assert.equal(store.rows.length, 0, 'nothing is written inside the minute');
  now += 60_000; // the next minute: the first record of it writes the last minute's rows
  audit.record({ action: 'admin.sign_in', object: 'admin' }, key('hk_a'));
  await audit.flush();
  const counts = store.rows.map((r) => [r.ctx.actor.id, r.ctx.sourceIp, r.event.action, r.event.count]);
  assert.deepEqual(counts, [
    ['anonymous', '203.0.113.9', 'admin.sign_in_failed', 50],
    ['anonymous', '198.51.100.1', 'admin.sign_in_failed', 1],
    ['hk_a', '10.0.0.1', 'admin.sign_in', 3],
    ['hk_a', '10.0.0.1', 'admin.sign_in', 1],
  ]);
  assert.deepEqual(store.rows[0]?.event.after, { first_at: '2026-12-06T10:00:05.000Z', last_at: '2026-12-06T10:00:05.000Z' });
  audit.record({ action: 'admin.sign_in', object: 'admin' }, key('hk_b'));
  await audit.close();
  assert.equal(store.rows.at(-1)?.ctx.actor.id, 'hk_b', 'close writes what is held');
  audit.record({ action: 'admin.sign_in', object: 'admin' }, key('hk_c'));
  await audit.flush();
  assert.equal(store.rows.length, 5, 'nothing is counted after close');
});

test('past maxEntries distinct sources, the minute folds into one row per action', async () => {
  const store = fakeStore();
  const audit = new AuditAggregator({ store, now: () => 0, timer: false, maxEntries: 10 });
  for (let i = 0; i < 1000; i++) audit.record({ action: 'admin.sign_in_failed', object: 'admin' }, anonymous(`10.0.${i >> 8}.${i & 255}`));
  await audit.flush();
  assert.equal(store.rows.length, 11);
  const overflow = store.rows.at(-1);
  assert.deepEqual([overflow?.ctx.actor.id, overflow?.event.object, overflow?.event.count], ['many', '*', 990]);
});

test('a failing store is reported, never thrown at the caller', async () => {
  const errors: unknown[] = [];
  const audit = new AuditAggregator({
    store: { appendAudit: async () => Promise.reject(new Error('disk full')) },
    now: () => 0,
    timer: false,
    onError: (e) => errors.push(e),
  });
  audit.record({ action: 'admin.sign_in', object: 'admin' }, key('hk_a'));
  await audit.close();
  assert.equal((errors[0] as Error).message, 'disk full');
});
