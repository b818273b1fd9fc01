// The alert sender against a local receiver: Standard Webhooks headers and a signature the receiver can
// verify, delivered once; a failing receiver gets bounded retries with backoff, then the row is failed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alertsConfigSchema } from '../../../src/config/billing-config-schema.ts';
import { AlertSender } from '../../../src/gateway/billing/alert-sender.ts';
import { SqliteLedger } from '../../../src/gateway/billing/sqlite-ledger.ts';
import { dayMonthLines } from './budget-fixtures.ts';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

async function startReceiver(status: () => number): Promise<{ url: string; received: Received[]; close: () => Promise<void> }> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => {
      body += d.toString();
    });
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(status()).end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/budget`;
  return { url, received, close: () => new Promise((ok) => server.close(() => ok())) };
}

const SECRET = `whsec_${Buffer.from('a test signing key, 32 bytes long').toString('base64')}`;

/** What a receiver does (docs/keys-and-teams.md): HMAC-SHA256 over id.timestamp.body with the base64-decoded key. */
function verify(r: Received): boolean {
  const id = String(r.headers['webhook-id']);
  const ts = String(r.headers['webhook-timestamp']);
  const key = Buffer.from(SECRET.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${ts}.${r.body}`).digest('base64');
  return String(r.headers['webhook-signature'])
    .split(' ')
    .some((sig) => sig === `v1,${expected}`);
}

test('a crossed threshold is POSTed once, signed, with the budget, the spend and the period end; then marked delivered', async (t) => {
  const receiver = await startReceiver(() => 204);
  t.after(() => receiver.close());
  const ledger = SqliteLedger.open(join(mkdtempSync(join(tmpdir(), 'herd-alerts-')), 'herd.db'));
  t.after(() => ledger.close());
  const at = Date.parse('2026-12-06T10:00:00Z');
  const lines = dayMonthLines('hk_alerts', { dayMicros: 5_000 }, at, [80]);
  await ledger.settle('r1', { costMicros: 4_200, keyId: 'hk_alerts', lines, atMs: at });
  const config = alertsConfigSchema.parse({ webhook_url: receiver.url, secret_env: 'X' });
  const sender = new AlertSender({ outbox: ledger.alertOutbox(), config, secret: SECRET, currency: 'CNY', log: () => undefined, workerId: 'test:1' });
  assert.equal(await sender.runOnce(), 1);
  assert.equal(await sender.runOnce(), 0, 'delivered: never again');
  assert.equal(receiver.received.length, 1);
  const [got] = receiver.received;
  assert.ok(got && verify(got), 'the signature verifies');
  assert.equal(got.headers['webhook-sender'], 'test:1');
  assert.match(String(got.headers['webhook-id']), /^alrt_[0-9a-f]{24}$/);
  const body = JSON.parse(got.body) as Record<string, unknown>;
  assert.deepEqual(
    { ...body, id: undefined, crossed_at: undefined },
    {
      type: 'budget.threshold',
      id: undefined,
      owner: { kind: 'key', id: 'hk_alerts', name: 'hk_alerts' },
      subject: 'hk_alerts',
      period: 'day',
      bucket: 'd:2026-12-06',
      model: null,
      threshold: 80,
      currency: 'CNY',
      budget: '0.005000',
      spend: '0.004200',
      timezone: 'UTC',
      resets_at: '2026-12-07T00:00:00.000Z',
      crossed_at: undefined,
    },
  );
  assert.deepEqual(
    (await ledger.alertOutbox().list()).map((r) => [r.state, r.attempts]),
    [['delivered', 1]],
  );
});

test('a receiver that keeps failing: retried with growing waits, then failed after max_attempts, and logged', async (t) => {
  const receiver = await startReceiver(() => 500);
  t.after(() => receiver.close());
  const ledger = SqliteLedger.open(join(mkdtempSync(join(tmpdir(), 'herd-alerts-')), 'herd.db'));
  t.after(() => ledger.close());
  const at = Date.parse('2026-12-06T10:00:00Z');
  await ledger.settle('r1', { costMicros: 900, keyId: 'hk_b', lines: dayMonthLines('hk_b', { dayMicros: 1_000 }, at, [50]), atMs: at });
  const clock = { now: at };
  const logged: string[] = [];
  const config = alertsConfigSchema.parse({ webhook_url: receiver.url, max_attempts: 3 });
  const sender = new AlertSender({ outbox: ledger.alertOutbox(), config, secret: undefined, currency: 'USD', log: (l) => logged.push(l), now: () => clock.now });
  assert.equal(await sender.runOnce(), 1);
  assert.equal(await sender.runOnce(), 0, 'not due before its backoff');
  clock.now += 1_000;
  assert.equal(await sender.runOnce(), 1, 'second attempt after 1 s');
  clock.now += 1_999;
  assert.equal(await sender.runOnce(), 0, 'the third waits 2 s');
  clock.now += 1;
  assert.equal(await sender.runOnce(), 1);
  clock.now += 3_600_000;
  assert.equal(await sender.runOnce(), 0, 'failed: no more attempts');
  assert.equal(receiver.received.length, 3);
  assert.equal(receiver.received[0]?.headers['webhook-signature'], undefined, 'no secret configured: unsigned');
  const [row] = await ledger.alertOutbox().list();
  assert.deepEqual([row?.state, row?.attempts, row?.lastError], ['failed', 3, 'the webhook answered 500']);
  assert.match(logged.at(-1) ?? '', /failed after 3 attempts: the webhook answered 500/);
});
