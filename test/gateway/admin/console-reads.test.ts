// ConsoleReads over an in-memory ledger: roles (viewer reads, client and manager do not), the overview's
// spend read once per 5 s, request detail from the recent ring before the ledger, spend range cap, the
// CSV's rows equal to the JSON's across pages, deployments with their breakers, settings until wired.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HerdError } from '../../../src/core/errors.ts';
import { ConsoleReads } from '../../../src/gateway/admin/console-reads.ts';
import { formatMicros } from '../../../src/gateway/admin/convert-console-json.ts';
import { RecentTraffic } from '../../../src/gateway/billing/recent-traffic.ts';
import { RequestFeed } from '../../../src/gateway/billing/request-feed.ts';
import type { ChangeContext } from '../../../src/gateway/keys/key-store.ts';
import { buildGatewayCatalog } from '../../../src/gateway/router/gateway-catalog.ts';
import { gatewayConfig } from '../helpers/gateway-fixtures.ts';
import { FakeConsoleLedger, attemptRow, requestRecord, usageRow } from './console-fixtures.ts';

const as = (role: 'admin' | 'viewer' | 'manager' | 'client'): ChangeContext => ({ actor: { id: `k-${role}`, name: role, role, teamId: role === 'manager' ? 't1' : undefined } });
const DAY = 86_400_000;

function setup(options: { now?: () => number; ledger?: FakeConsoleLedger | null } = {}) {
  const ledger = options.ledger === null ? undefined : (options.ledger ?? new FakeConsoleLedger());
  const feed = new RequestFeed();
  const traffic = new RecentTraffic({ now: options.now ?? Date.now });
  traffic.attach(feed);
  const catalog = buildGatewayCatalog(
    gatewayConfig(`
providers:
  relay: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: RELAY_KEY }
  off: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: MISSING_KEY }
models:
  gpt-4.1:
    price: { input: 2, output: 8 }
    deployments: [{ provider: relay, upstream_model: gpt-4.1-a }, { provider: off, upstream_model: gpt-4.1-b }]
  lonely:
    price: { input: 2, output: 8 }
    deployments: [{ provider: off }]
`),
    { RELAY_KEY: 'x' },
  );
  const reads = new ConsoleReads({
    ledger,
    feed,
    traffic,
    currency: 'CNY',
    catalog,
    breakers: () => [{ key: 'relay/gpt-4.1-a', breaker: 'open' }],
    ...(options.now ? { now: options.now } : {}),
  });
  return { reads, feed, ledger };
}

describe('ConsoleReads', () => {
  it('a viewer reads everything; a client or a manager key reads nothing', async () => {
    const { reads } = setup();
    await reads.overview(as('viewer'), undefined);
    await reads.listRequests(as('viewer'), { limit: 10 });
    reads.deployments(as('viewer'));
    for (const role of ['client', 'manager'] as const) {
      await assert.rejects(reads.overview(as(role), undefined), (e: HerdError) => e.code === 'PERMISSION_DENIED');
      await assert.rejects(reads.listRequests(as(role), { limit: 10 }), (e: HerdError) => e.code === 'PERMISSION_DENIED');
      assert.throws(
        () => reads.deployments(as(role)),
        (e: HerdError) => e.code === 'PERMISSION_DENIED',
      );
    }
  });

  it("the overview's spend is read once per 5 s however many consoles poll (the month's past days once per 10 min); serving figures come from the caller", async () => {
    let now = Date.UTC(2026, 11, 7, 12);
    const ledger = new FakeConsoleLedger(
      [],
      [usageRow('key-a', 900, { keyName: 'alice', requests: 3 })],
      [{ currency: 'CNY', requests: 4, costMicros: 1000, usdMicros: 140, listUsdMicros: 200 }],
    );
    const { reads } = setup({ now: () => now, ledger });
    const first = await reads.overview(as('admin'), { ready: true, models: { ready: 2, failed: 1, total: 3 }, inferencesPerSec: 1.5 });
    for (let i = 0; i < 5; i++) await reads.overview(as('viewer'), undefined);
    assert.equal(ledger.calls.spendTotals, 2);
    assert.equal(ledger.calls.usagePage, 2);
    now += 5_000;
    await reads.overview(as('admin'), undefined);
    // Today's figures again; the month's days before today stay cached (10 minutes, or until the day turns).
    assert.equal(ledger.calls.spendTotals, 3);
    assert.equal(ledger.calls.usagePage, 4);
    assert.deepEqual(first.spend?.today, { requests: 4, cost_micros: 1000, usd_micros: 140, list_usd_micros: 200, saving_usd_micros: 60 });
    assert.equal(first.spend?.currency, 'CNY');
    // The fake answers every range alike: the month is the days before today plus today.
    assert.equal(first.spend?.month.requests, 8);
    assert.deepEqual(first.top_keys, [{ id: 'key-a', name: 'alice', requests: 3, cost_micros: 900 }]);
    // Serving 2 ready + 1 failed, gateway gpt-4.1 (one deployment usable) ready + lonely failed.
    assert.deepEqual(first.models, { ready: 3, failed: 2, total: 5 });
    assert.equal(first.serving.inferences_per_sec, 1.5);
    // Today starts at UTC midnight, the month on the 1st.
    const byKey = ledger.usageQueries.find((q) => q.by === 'key');
    assert.equal(byKey?.sinceMs, Date.UTC(2026, 11, 7));
  });

  it('without a ledger: spend is null, the list is 404, a recent request is still found', async () => {
    const { reads, feed } = setup({ ledger: null });
    const overview = await reads.overview(as('admin'), undefined);
    assert.equal(overview.spend, null);
    await assert.rejects(reads.listRequests(as('admin'), { limit: 5 }), (e: HerdError) => e.code === 'NOT_FOUND');
    feed.publish(requestRecord({ requestId: 'fresh' }), [attemptRow({ requestId: 'fresh' })]);
    const detail = await reads.getRequest(as('viewer'), 'fresh');
    assert.equal(detail.request_id, 'fresh');
    assert.equal(detail.attempts.length, 1);
    await assert.rejects(reads.getRequest(as('admin'), 'nope'), (e: HerdError) => e.code === 'NOT_FOUND');
  });

  it('request detail: the recent ring first, then the ledger; the list passes its filters in one query', async () => {
    const stored = { request: requestRecord({ requestId: 'old', dialect: 'anthropic-messages', routeRule: 'gpt-*' }), attempts: [attemptRow({ requestId: 'old' })] };
    const ledger = new FakeConsoleLedger([stored]);
    const { reads, feed } = setup({ ledger });
    feed.publish(requestRecord({ requestId: 'new' }), []);
    assert.equal((await reads.getRequest(as('admin'), 'new')).request_id, 'new');
    assert.equal(ledger.calls.getRequest, 0);
    const old = await reads.getRequest(as('admin'), 'old');
    assert.equal(old.dialect, 'anthropic-messages');
    assert.equal(old.route, 'gpt-*');
    assert.equal(old.attempts[0]?.outcome, 'ok');
    const page = await reads.listRequests(as('admin'), { key: 'key-a', model: 'm', status: 'error', dialect: 'openai-chat', sinceMs: 5, untilMs: 9, limit: 1, cursor: 'c' });
    assert.equal(ledger.calls.listRequests, 1);
    assert.deepEqual(ledger.lastListQuery, { keyId: 'key-a', model: 'm', status: 'error', dialect: 'openai-chat', sinceMs: 5, untilMs: 9, limit: 1, cursor: 'c' });
    assert.equal(page.next_cursor, null);
    assert.equal(page.data[0]?.key_name, 'alice');
  });

  it('spend: one query per page, a range over 400 days refused; the CSV holds every page and the same rows', async () => {
    const rows = Array.from({ length: 2_500 }, (_, i) => usageRow(`key-${i}`, 10_000_000 - i, { keyName: i === 0 ? '=cmd,"x"' : `k${i}` }));
    const ledger = new FakeConsoleLedger([], rows);
    const { reads } = setup({ ledger });
    const now = Date.now();
    const page = await reads.spend(as('viewer'), { by: 'key', sinceMs: now - 30 * DAY, untilMs: now, limit: 100 });
    assert.equal(ledger.calls.usagePage, 1);
    assert.equal(page.data.length, 100);
    assert.equal(page.total_groups, 2_500);
    assert.equal(page.next_cursor, '100');
    assert.equal(page.data[1]?.name, 'k1');
    await assert.rejects(
      reads.spend(as('admin'), { by: 'day', sinceMs: now - 401 * DAY, untilMs: now, limit: 10 }),
      (e: HerdError) => e.code === 'INVALID_ARG' && /400 days/.test(e.message),
    );
    const before = ledger.calls.usagePage;
    const csv = await reads.spendCsv(as('viewer'), { by: 'key', sinceMs: now - 30 * DAY, untilMs: now });
    assert.equal(ledger.calls.usagePage - before, 3);
    const lines = csv.csv.trimEnd().split('\r\n');
    assert.equal(lines.length, 2_501);
    assert.match(lines[0] as string, /^key,name,currency,requests,/);
    // A name a spreadsheet would run is defused and quoted.
    assert.equal(lines[1], `key-0,"'=cmd,""x""",CNY,1,0,0,10,0,20,0,10.000000,1.428571,1.666666,0.000000`);
    assert.equal(lines[2]?.split(',')[10], formatMicros(rows[1]?.costMicros as number));
  });

  it('formatMicros is exact to the micro', () => {
    assert.equal(formatMicros(0), '0.000000');
    assert.equal(formatMicros(1), '0.000001');
    assert.equal(formatMicros(123_456_789), '123.456789');
    assert.equal(formatMicros(-5), '-0.000005');
  });

  it('deployments carry their breaker; settings are 404 until a describer is wired', () => {
    const { reads } = setup();
    const data = reads.deployments(as('viewer')).data;
    assert.deepEqual(
      data.map((d) => [d.model, d.provider, d.upstream_model, d.breaker, d.healthy]),
      [
        ['gpt-4.1', 'relay', 'gpt-4.1-a', 'open', false],
        ['gpt-4.1', 'off', 'gpt-4.1-b', 'closed', false],
        ['lonely', 'off', 'lonely', 'closed', false],
      ],
    );
    assert.throws(
      () => reads.settings(as('admin')),
      (e: HerdError) => e.code === 'NOT_FOUND' && /not available/.test(e.message),
    );
  });
});
