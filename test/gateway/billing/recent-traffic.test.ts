// RecentTraffic on a pinned clock: 60 s of 1 s buckets, the current second left out, 12 series points of
// 5 s, errors apart, p50/p99 within the histogram's 5 %, old seconds forgotten.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RecentTraffic } from '../../../src/gateway/billing/recent-traffic.ts';
import { RequestFeed } from '../../../src/gateway/billing/request-feed.ts';
import { requestRecord } from '../admin/console-fixtures.ts';

describe('RecentTraffic', () => {
  it('counts requests and errors per second, and reads p50/p99 from the histogram', () => {
    let now = 1_000_000_000;
    const traffic = new RecentTraffic({ now: () => now });
    const feed = new RequestFeed();
    const off = traffic.attach(feed);
    // 100 requests over the first 10 s: latencies 1..100 ms, every tenth failed.
    for (let i = 1; i <= 100; i++) {
      now = 1_000_000_000 + Math.floor((i - 1) / 10) * 1000;
      feed.publish(requestRecord({ requestId: `r${i}`, latencyMs: i, status: i % 10 === 0 ? 'UPSTREAM_ERROR' : 'ok' }), []);
    }
    now = 1_000_000_000 + 10_000;
    const snap = traffic.snapshot();
    assert.equal(snap.window_secs, 60);
    assert.equal(snap.series.length, 12);
    assert.equal(
      snap.series.reduce((s, p) => s + p.requests, 0),
      100,
    );
    assert.equal(
      snap.series.reduce((s, p) => s + p.errors, 0),
      10,
    );
    assert.equal(snap.requests_per_sec, Math.round((100 / 60) * 1000) / 1000);
    assert.ok(snap.p50_ms !== null && Math.abs(snap.p50_ms - 50) / 50 < 0.06, String(snap.p50_ms));
    assert.ok(snap.p99_ms !== null && Math.abs(snap.p99_ms - 99) / 99 < 0.06, String(snap.p99_ms));
    // The last series point ends at the current second; the points are 5 s apart.
    const last = snap.series.at(-1);
    assert.equal(last?.t, Math.floor(now / 1000) - 5);
    off();
    feed.publish(requestRecord({ requestId: 'after' }), []);
    assert.equal(
      traffic.snapshot().series.reduce((s, p) => s + p.requests, 0),
      100,
    );
  });

  it('leaves out the current second and forgets seconds older than 60', () => {
    let now = 5_000_000;
    const traffic = new RecentTraffic({ now: () => now });
    traffic.observe({ status: 'ok', latencyMs: 5 });
    assert.equal(traffic.snapshot().requests_per_sec, 0);
    assert.equal(traffic.snapshot().p50_ms, null);
    now += 1000;
    assert.equal(
      traffic.snapshot().series.reduce((s, p) => s + p.requests, 0),
      1,
    );
    now += 61_000;
    const snap = traffic.snapshot();
    assert.equal(
      snap.series.reduce((s, p) => s + p.requests, 0),
      0,
    );
    assert.equal(snap.p99_ms, null);
    // A latency under 1 ms lands in the first bin.
    traffic.observe({ status: 'ok', latencyMs: 0.2 });
    now += 1000;
    assert.equal(traffic.snapshot().p50_ms, 0);
  });
});
