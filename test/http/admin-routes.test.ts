// GET /admin/usage through Fastify: the master key gets the report (the same JSON as `herd usage
// --json`); a client key 403, no key 401, an open gateway 403 — all in OpenAI's error shape.
import { test } from 'node:test';
import { createSyntheticKey } from '../../src/gateway/keys/synthetic-key.ts';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { SqliteLedger } from '../../src/gateway/billing/sqlite-ledger.ts';
import { buildUsageReport, convertUsageReportToJson } from '../../src/gateway/billing/usage-report.ts';
import { openKeyStore } from '../../src/gateway/keys/open-key-store.ts';
import { registerAdminRoutes } from '../../src/http/admin-routes.ts';
import { sampleRequest } from '../gateway/billing/ledger-contract.ts';
import { createTestAuthenticator, MASTER } from './admin-test-setup.ts';

const NOW = Date.parse('2026-05-21T12:00:00Z');
const CLI = { actor: { id: 'cli@test', name: 'cli@test', role: 'admin' as const } };

async function setup(options: { master: boolean } = { master: true }) {
  const dir = mkdtempSync(join(tmpdir(), 'herd-admin-'));
  const store = await openKeyStore(join(dir, 'keys.db'));
  const ledger = SqliteLedger.open(join(dir, 'ledger.db'));
  ledger.record(sampleRequest({ requestId: 'a', startedAt: NOW - 3_600_000 }), []);
  ledger.record(sampleRequest({ requestId: 'b', startedAt: NOW - 2 * 86_400_000, provider: 'holysheep', keyId: 'key_b', keyName: 'team b' }), []);
  await ledger.flush();
  const inner = createTestAuthenticator(store);
  // Without a master key and without keys, the real Authenticator lets a local caller in as the anonymous client.
  const authenticator = options.master ? inner : { authenticate: (h: string | undefined) => (store.hasActiveKeys() ? inner.authenticate(h) : { key: ANONYMOUS }) };
  const app = Fastify();
  const allowed: string[] = [];
  registerAdminRoutes(app, { authenticator, ledger, now: () => NOW, masterKeyEnv: 'HERD_MASTER_KEY' }, (url, methods) => allowed.push(`${methods.join(',')} ${url}`));
  await app.ready();
  return {
    app,
    store,
    ledger,
    allowed,
    async close() {
      await app.close();
      await ledger.close();
      await store.close();
    },
  };
}

const ANONYMOUS = createSyntheticKey({ id: 'anonymous', name: 'anonymous' });

test('the admin key gets the usage report, the same JSON as herd usage --json', async () => {
  const s = await setup();
  try {
    const res = await s.app.inject({ method: 'GET', url: '/admin/usage?since=7d&by=provider', headers: { authorization: `Bearer ${MASTER}` } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^application\/json/);
    const expected = convertUsageReportToJson(await buildUsageReport(s.ledger, { sinceMs: NOW - 7 * 86_400_000, untilMs: NOW, by: 'provider' }));
    assert.deepEqual(res.json(), expected);
    assert.deepEqual(
      res.json().rows.map((r: { group: string; cost: string }) => [r.group, r.cost]),
      [
        ['holysheep', '0.04'],
        ['openai', '0.04'],
      ],
    );
    const byDay = await s.app.inject({ method: 'GET', url: '/admin/usage', headers: { authorization: `Bearer ${MASTER}` } });
    assert.equal(byDay.json().by, 'day', 'defaults: since 7d, by day');
    assert.deepEqual(s.allowed, ['GET,HEAD /admin/usage']);
  } finally {
    await s.close();
  }
});

test("a client key gets 403, no key or a wrong key 401, in OpenAI's error shape", async () => {
  const s = await setup();
  try {
    const { secret } = await s.store.createKey({ name: 'ci-bot' }, CLI);
    const forbidden = await s.app.inject({ method: 'GET', url: '/admin/usage', headers: { authorization: `Bearer ${secret}` } });
    assert.equal(forbidden.statusCode, 403);
    assert.deepEqual(forbidden.json(), {
      error: {
        message: "GET /admin/usage needs the admin key: use the value of $HERD_MASTER_KEY as the Bearer token. The key 'ci-bot' is not an admin key.",
        type: 'invalid_request_error',
        param: null,
        code: 'insufficient_permissions',
      },
    });
    const missing = await s.app.inject({ method: 'GET', url: '/admin/usage' });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.json().error.type, 'invalid_request_error');
    const wrong = await s.app.inject({ method: 'GET', url: '/admin/usage', headers: { authorization: 'Bearer sk-herd-not-a-real-key-000000000000000000000' } });
    assert.equal(wrong.statusCode, 401);
    assert.equal(wrong.json().error.code, 'invalid_api_key');
  } finally {
    await s.close();
  }
});

test('an open gateway (no master key, no keys) does not open /admin', async () => {
  const s = await setup({ master: false });
  try {
    const res = await s.app.inject({ method: 'GET', url: '/admin/usage', remoteAddress: '127.0.0.1' });
    assert.equal(res.statusCode, 403, res.body);
    assert.match(res.json().error.message, /needs the admin key: use the value of \$HERD_MASTER_KEY/);
  } finally {
    await s.close();
  }
});

test('bad query parameters are 400 naming the parameter', async () => {
  const s = await setup();
  try {
    const auth = { authorization: `Bearer ${MASTER}` };
    const badBy = await s.app.inject({ method: 'GET', url: '/admin/usage?by=week', headers: auth });
    assert.equal(badBy.statusCode, 400);
    assert.deepEqual([badBy.json().error.param, badBy.json().error.type], ['by', 'invalid_request_error']);
    const badSince = await s.app.inject({ method: 'GET', url: '/admin/usage?since=last%20week', headers: auth });
    assert.equal(badSince.statusCode, 400);
    assert.equal(badSince.json().error.param, 'since');
    const backwards = await s.app.inject({ method: 'GET', url: '/admin/usage?since=1d&until=2d', headers: auth });
    assert.equal(backwards.json().error.param, 'until');
  } finally {
    await s.close();
  }
});
