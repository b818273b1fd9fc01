// The request feed: a ring of the last N requests by id, listeners called in order (one throwing does
// not stop the rest), unsubscribe, and the ledger wrapper that publishes before it records.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Ledger } from '../../../src/gateway/billing/ledger.ts';
import { publishingLedger, RequestFeed } from '../../../src/gateway/billing/request-feed.ts';
import { attemptRow, requestRecord } from '../admin/console-fixtures.ts';

describe('RequestFeed', () => {
  it('keeps the last ringSize requests by id, with their attempts', () => {
    const feed = new RequestFeed({ ringSize: 3 });
    for (let i = 1; i <= 5; i++) feed.publish(requestRecord({ requestId: `r${i}` }), [attemptRow({ requestId: `r${i}` })]);
    assert.equal(feed.recent('r1'), undefined);
    assert.equal(feed.recent('r2'), undefined);
    assert.equal(feed.recent('r3')?.request.requestId, 'r3');
    assert.equal(feed.recent('r5')?.attempts[0]?.requestId, 'r5');
  });

  it('a request published twice (a retry of the same id) is found at its latest slot and survives its old slot being reused', () => {
    const feed = new RequestFeed({ ringSize: 2 });
    feed.publish(requestRecord({ requestId: 'a', status: 'failed' }), []);
    feed.publish(requestRecord({ requestId: 'a', status: 'ok' }), []);
    feed.publish(requestRecord({ requestId: 'b' }), []);
    assert.equal(feed.recent('a')?.request.status, 'ok');
  });

  it('calls listeners until unsubscribed; a throwing listener is reported and the others still run', () => {
    const errors: unknown[] = [];
    const feed = new RequestFeed({ onError: (e) => errors.push(e) });
    const seen: string[] = [];
    const off = feed.subscribe(() => {
      throw new Error('boom');
    });
    const off2 = feed.subscribe((r) => seen.push(r.requestId));
    feed.publish(requestRecord({ requestId: 'x' }), []);
    off();
    off();
    feed.publish(requestRecord({ requestId: 'y' }), []);
    off2();
    feed.publish(requestRecord({ requestId: 'z' }), []);
    assert.deepEqual(seen, ['x', 'y']);
    assert.equal(errors.length, 1);
    assert.equal(feed.listenerCount, 0);
  });

  it('publishingLedger publishes before record() and delegates everything else', async () => {
    const order: string[] = [];
    const feed = new RequestFeed();
    feed.subscribe((r) => order.push(`feed ${r.requestId}`));
    const inner = {
      kind: 'sqlite',
      record: async (r: { requestId: string }) => {
        order.push(`record ${r.requestId}`);
      },
      flush: async () => {
        order.push('flush');
      },
      stats: () => ({ queued: 7 }),
      intend: () => order.push('intend'),
    } as unknown as Ledger;
    const ledger = publishingLedger(inner, feed);
    await ledger.record(requestRecord({ requestId: 'q' }), []);
    await ledger.flush();
    ledger.intend?.({} as Parameters<NonNullable<Ledger['intend']>>[0]);
    assert.deepEqual(order, ['feed q', 'record q', 'flush', 'intend']);
    assert.equal(ledger.stats().queued, 7);
    assert.equal(ledger.alertOutbox, undefined);
    assert.equal(feed.recent('q')?.request.requestId, 'q');
  });
});
