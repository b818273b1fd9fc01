// GET /admin/v1/requests/tail on a real listening app: events as the feed publishes them (before any
// ledger), server-side filters, heartbeats, a slow reader told and dropped, the per-replica cap (429),
// closeTailsOf for sign-out, the feed unsubscribed when no tail is open, and close() not held by a tail.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeTailsOf } from '../../../src/http/console/requests-tail-route.ts';
import { requestRecord } from '../../gateway/admin/console-fixtures.ts';
import { type ConsoleTestApp, openSse, startConsoleTestApp, TOKENS } from './console-test-app.ts';

const TAIL = '/admin/v1/requests/tail';
const eventsIn = (text: string) =>
  text
    .split('\n\n')
    .filter((block) => block.startsWith('event: request'))
    .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 6)) as Record<string, unknown>);

async function waitFor(test: () => boolean): Promise<void> {
  while (!test()) await new Promise((r) => setTimeout(r, 5));
}

describe('the request tail', () => {
  let t: ConsoleTestApp;
  before(async () => {
    t = await startConsoleTestApp({ maxTails: 3, maxBuffered: 8, heartbeatMs: 25, dropGraceMs: 60_000, maxEventsPerSecond: 1_000_000, flushMs: 5 });
  });
  after(async () => {
    await t?.close();
  });

  it('streams each published request as RequestJson, filtered on the server; subscribes only while open', async () => {
    assert.equal(t.feed.listenerCount, 1, 'only the traffic counter listens');
    const all = await openSse(`${t.url}${TAIL}`, TOKENS.viewer);
    const errors = await openSse(`${t.url}${TAIL}?status=error&model=gpt-4.1&dialect=openai-chat&key=key-a`, TOKENS.admin);
    assert.equal(all.status, 200);
    assert.match(String(all.headers['content-type']), /^text\/event-stream/);
    assert.equal(t.feed.listenerCount, 2, 'one listener for all the tails');
    assert.equal(t.tails.size, 2);
    t.feed.publish(requestRecord({ requestId: 'ok-1' }), []);
    t.feed.publish(requestRecord({ requestId: 'err-1', status: 'UPSTREAM_ERROR', httpStatus: 502 }), []);
    t.feed.publish(requestRecord({ requestId: 'err-other-key', status: 'cancelled', keyId: 'key-b' }), []);
    t.feed.publish(requestRecord({ requestId: 'err-anthropic', status: 'failed', dialect: 'anthropic-messages' }), []);
    t.feed.publish(requestRecord({ requestId: 'err-2', status: 'failed', model: undefined, requestedModel: 'gpt-4.1' }), []);
    await all.until((s) => eventsIn(s).length === 5);
    await errors.until((s) => eventsIn(s).length === 2);
    assert.deepEqual(
      eventsIn(errors.text()).map((e) => e.request_id),
      ['err-1', 'err-2'],
    );
    const first = eventsIn(all.text())[0] as Record<string, unknown>;
    assert.equal(first.request_id, 'ok-1');
    assert.equal(first.key_name, 'alice');
    assert.equal(first.cost_micros, 1500);
    assert.equal(first.dialect, 'openai-chat');
    all.close();
    errors.close();
    await waitFor(() => t.feed.listenerCount === 1);
  });

  it('sends a ping comment on the heartbeat interval', async () => {
    const tail = await openSse(`${t.url}${TAIL}`, TOKENS.viewer);
    await tail.until((s) => s.includes(': ping\n\n'));
    tail.close();
    await waitFor(() => t.feed.listenerCount === 1);
  });

  it('a reader that falls behind by more than the bound gets `dropped` and is closed; the others go on', async () => {
    const slow = await openSse(`${t.url}${TAIL}`, TOKENS.viewer);
    const fast = await openSse(`${t.url}${TAIL}`, TOKENS.admin);
    slow.response.pause();
    // Far more than the sockets' buffers hold: the server's writes back up, then its queue of 8 overflows.
    const big = 'm'.repeat(16_000);
    for (let i = 0; i < 20_000 && t.tails.size === 2; i++) {
      t.feed.publish(requestRecord({ requestId: `bulk-${i}`, requestedModel: big }), []);
      if (i % 4 === 3) await new Promise((r) => setImmediate(r));
    }
    assert.equal(t.tails.size, 1, 'the slow tail is gone, the fast one stays');
    slow.response.resume();
    await slow.ended;
    assert.ok(slow.text().endsWith('event: dropped\ndata: {"reason":"slow"}\n\n'), slow.text().slice(-200));
    t.feed.publish(requestRecord({ requestId: 'after-drop' }), []);
    await fast.until((s) => s.includes('"request_id":"after-drop"'));
    fast.close();
    await waitFor(() => t.feed.listenerCount === 1);
  });

  it('refuses a tail beyond the per-replica cap with 429; a closed one frees its place', async () => {
    const open = await Promise.all([1, 2, 3].map(() => openSse(`${t.url}${TAIL}`, TOKENS.viewer)));
    const refused = await fetch(`${t.url}${TAIL}`, { headers: { authorization: `Bearer ${TOKENS.viewer}` } });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), '5');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    assert.equal(body.error.code, 'rate_limit_exceeded');
    assert.match(body.error.message, /3 live request tails/);
    open[0]?.close();
    await waitFor(() => t.tails.size === 2);
    const again = await openSse(`${t.url}${TAIL}`, TOKENS.viewer);
    assert.equal(again.status, 200);
    for (const tail of [...open, again]) tail?.close();
    await waitFor(() => t.feed.listenerCount === 1);
  });

  it("closeTailsOf(id) ends that key's tails (sign-out) and leaves the others", async () => {
    const mine = await openSse(`${t.url}${TAIL}`, TOKENS.viewer);
    const theirs = await openSse(`${t.url}${TAIL}`, TOKENS.viewer2);
    assert.equal(closeTailsOf('key-viewer'), 1);
    await mine.ended;
    assert.ok(mine.text().endsWith('event: closed\ndata: {"reason":"signed_out"}\n\n'));
    t.feed.publish(requestRecord({ requestId: 'still-open' }), []);
    await theirs.until((s) => s.includes('still-open'));
    theirs.close();
    await waitFor(() => t.feed.listenerCount === 1);
  });

  it('a client key is 403 and no key 401, before any stream starts', async () => {
    const client = await fetch(`${t.url}${TAIL}`, { headers: { authorization: `Bearer ${TOKENS.client}` } });
    assert.equal(client.status, 403);
    assert.match(String(client.headers.get('content-type')), /application\/json/);
    const none = await fetch(`${t.url}${TAIL}`);
    assert.equal(none.status, 401);
    const badFilter = await fetch(`${t.url}${TAIL}?colour=red`, { headers: { authorization: `Bearer ${TOKENS.admin}` } });
    assert.equal(badFilter.status, 400);
  });
});

describe('a busy replica', () => {
  it('sends at most maxEventsPerSecond events a second per tail and counts the rest in `skipped`', async () => {
    const t = await startConsoleTestApp({ maxEventsPerSecond: 3, flushMs: 5 });
    try {
      const tail = await openSse(`${t.url}${TAIL}`, TOKENS.admin);
      for (let i = 0; i < 10; i++) t.feed.publish(requestRecord({ requestId: `burst-${i}` }), []);
      const skippedIn = (text: string) => [...text.matchAll(/event: skipped\ndata: \{"count":(\d+)\}/g)].reduce((n, m) => n + Number(m[1]), 0);
      const text = await tail.until((s) => eventsIn(s).length + skippedIn(s) === 10);
      // Ten requests published at once fall in one second (two, should the clock tick between them).
      assert.ok(eventsIn(text).length === 3 || eventsIn(text).length === 6, text);
      assert.deepEqual(
        eventsIn(text)
          .slice(0, 3)
          .map((e) => e.request_id),
        ['burst-0', 'burst-1', 'burst-2'],
      );
      tail.close();
    } finally {
      await t.close();
    }
  });
});

describe('closing the server', () => {
  it('ends open tails instead of waiting for them', async () => {
    const t = await startConsoleTestApp();
    const tail = await openSse(`${t.url}${TAIL}`, TOKENS.admin);
    await t.close();
    await tail.ended;
  });
});
