// The /admin/v1 API end to end through Fastify over a real SQLite key store and ledger: keys and teams
// with Idempotency-Key replay and conflicts, the roles (admin, viewer, manager, client), one query per
// list page, rotation, block, revoke, audit (sign-ins aggregated), usage and the catalogue.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { planBudgets } from '../../src/gateway/billing/plan-budgets.ts';
import { createTestDatabase } from '../e2e/create-test-database.ts';
import { asMaster, bearer, setupAdmin } from './admin-test-setup.ts';

const json = (res: LightMyRequestResponse) => res.json() as Record<string, unknown> & { data: Record<string, unknown>[]; next_cursor: string | null };

test('create needs an Idempotency-Key; a retry replays the same answer (the secret too), another body is 409', async () => {
  const s = await setupAdmin();
  try {
    const body = { name: 'ci-bot', budgets: [{ period: 'day', amount_micros: 5_000_000 }], tags: ['ci'] };
    const missing = await s.app.inject({ method: 'POST', url: '/admin/v1/keys', headers: asMaster(), payload: body });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error.param, 'Idempotency-Key');
    const first = await s.app.inject({ method: 'POST', url: '/admin/v1/keys', headers: asMaster({ 'idempotency-key': 'k1' }), payload: body });
    assert.equal(first.statusCode, 201, first.body);
    const created = first.json();
    assert.match(created.secret, /^sk-herd-/);
    assert.equal(created.key.name, 'ci-bot');
    assert.deepEqual(created.key.budgets, [{ period: 'day', amount_micros: 5_000_000, amount: '5.00', model: null }]);
    assert.equal(created.key.state, 'active');
    const again = await s.app.inject({ method: 'POST', url: '/admin/v1/keys', headers: asMaster({ 'idempotency-key': 'k1' }), payload: body });
    assert.equal(again.statusCode, 201);
    assert.equal(again.headers['idempotent-replayed'], 'true');
    assert.deepEqual(again.json(), created, 'the same key and secret: no second key minted');
    const other = await s.app.inject({ method: 'POST', url: '/admin/v1/keys', headers: asMaster({ 'idempotency-key': 'k1' }), payload: { ...body, name: 'other' } });
    assert.equal(other.statusCode, 409);
    assert.equal(other.json().error.code, 'conflict');
    const list = await s.app.inject({ method: 'GET', url: '/admin/v1/keys', headers: asMaster() });
    assert.deepEqual(
      json(list).data.map((k) => k.name),
      ['ci-bot'],
    );
    const unknown = await s.app.inject({ method: 'POST', url: '/admin/v1/keys', headers: asMaster({ 'idempotency-key': 'k2' }), payload: { name: 'x', budget: 5 } });
    assert.equal(unknown.statusCode, 400, 'an unknown field is refused, not dropped');
    assert.match(unknown.json().error.message, /budget/);
  } finally {
    await s.close();
  }
});

test("a page of keys is one store query and one ledger query, with each budgeted key's spend this period", async () => {
  const now = Date.parse('2026-12-06T12:00:00Z');
  const s = await setupAdmin({ now: () => now });
  try {
    const ctx = { actor: { id: 'cli@test', name: 'cli@test', role: 'admin' as const } };
    for (let i = 0; i < 5; i++) await s.store.createKey({ name: `k${i}`, budgets: [{ period: 'month', amountMicros: 10_000_000 }] }, ctx);
    await s.store.createKey({ name: 'unbudgeted' }, ctx);
    const k0 = await s.store.findKey('k0');
    const lines = planBudgets(k0, now);
    await s.ledger.reserve({ keyId: k0.id, requestId: 'r1', estimateMicros: 2_000_000, lines, atMs: now });
    await s.ledger.settle('r1', { costMicros: 1_250_000 });
    let storeCalls = 0;
    let ledgerCalls = 0;
    const listKeys = s.store.listKeys.bind(s.store);
    const budgetSpend = s.ledger.budgetSpend.bind(s.ledger);
    s.store.listKeys = (q) => {
      storeCalls++;
      return listKeys(q);
    };
    s.ledger.budgetSpend = (l) => {
      ledgerCalls++;
      return budgetSpend(l);
    };
    const names: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: LightMyRequestResponse = await s.app.inject({
        method: 'GET',
        url: `/admin/v1/keys?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        headers: asMaster(),
      });
      assert.equal(res.statusCode, 200, res.body);
      const page = json(res);
      for (const k of page.data) {
        names.push(k.name as string);
        if (k.name === 'k0')
          assert.deepEqual(k.spend, { period: 'month', spent_micros: 1_250_000, spent: '1.25', limit_micros: 10_000_000, limit: '10.00', resets_at: '2027-01-01T00:00:00.000Z' });
        if (k.name === 'unbudgeted') assert.equal(k.spend, null);
      }
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null);
    assert.deepEqual(names.sort(), ['k0', 'k1', 'k2', 'k3', 'k4', 'unbudgeted']);
    assert.equal(pages, 2);
    assert.equal(storeCalls, 2, 'one store query per page');
    assert.equal(ledgerCalls, 2, 'one ledger query per page, never one per row');
    const search = await s.app.inject({ method: 'GET', url: '/admin/v1/keys?search=unbud', headers: asMaster() });
    assert.deepEqual(
      json(search).data.map((k) => k.name),
      ['unbudgeted'],
    );
  } finally {
    await s.close();
  }
});

test('roles: viewer reads only; manager only its team and only client keys; client nothing', async () => {
  const s = await setupAdmin();
  try {
    const post = (headers: Record<string, string>, url: string, payload: unknown, key: string) =>
      s.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, payload: payload as object });
    assert.equal((await post(asMaster(), '/admin/v1/teams', { name: 'team-a' }, 't1')).statusCode, 201);
    assert.equal((await post(asMaster(), '/admin/v1/teams', { name: 'team-b' }, 't2')).statusCode, 201);
    const viewer = (await post(asMaster(), '/admin/v1/keys', { name: 'auditor', role: 'viewer' }, 'v')).json().secret as string;
    const manager = (await post(asMaster(), '/admin/v1/keys', { name: 'lead-a', role: 'manager', team: 'team-a' }, 'm')).json().secret as string;
    const clientB = (await post(asMaster(), '/admin/v1/keys', { name: 'bot-b', team: 'team-b' }, 'b')).json();
    const client = clientB.secret as string;

    assert.equal((await s.app.inject({ method: 'GET', url: '/admin/v1/keys', headers: bearer(viewer) })).statusCode, 200);
    assert.equal((await s.app.inject({ method: 'GET', url: '/admin/v1/audit', headers: bearer(viewer) })).statusCode, 200);
    const viewerWrite = await post(bearer(viewer), '/admin/v1/keys', { name: 'nope' }, 'v1');
    assert.equal(viewerWrite.statusCode, 403);
    assert.equal(viewerWrite.json().error.code, 'insufficient_permissions');

    const made = await post(bearer(manager), '/admin/v1/keys', { name: 'bot-a' }, 'm1');
    assert.equal(made.statusCode, 201, made.body);
    assert.deepEqual([made.json().key.role, made.json().key.team.name], ['client', 'team-a'], "a manager's key lands in its team as a client key");
    assert.equal((await post(bearer(manager), '/admin/v1/keys', { name: 'boss', role: 'admin' }, 'm2')).statusCode, 403);
    assert.equal((await post(bearer(manager), '/admin/v1/keys', { name: 'spy', team: 'team-b' }, 'm3')).statusCode, 403);
    const listed = await s.app.inject({ method: 'GET', url: '/admin/v1/keys', headers: bearer(manager) });
    assert.deepEqual(
      json(listed)
        .data.map((k) => k.name)
        .sort(),
      ['bot-a', 'lead-a'],
      "only its team's keys",
    );
    assert.equal((await s.app.inject({ method: 'GET', url: '/admin/v1/keys?team=team-b', headers: bearer(manager) })).statusCode, 403);
    assert.equal((await s.app.inject({ method: 'GET', url: `/admin/v1/keys/${clientB.key.id}`, headers: bearer(manager) })).statusCode, 403);
    assert.equal((await post(bearer(manager), `/admin/v1/keys/${clientB.key.id}/block`, undefined, 'm4')).statusCode, 403);
    assert.equal((await post(bearer(manager), '/admin/v1/keys/bot-a/block', undefined, 'm5')).statusCode, 200);
    assert.equal((await s.app.inject({ method: 'GET', url: '/admin/v1/usage', headers: bearer(manager) })).statusCode, 403);

    for (const url of ['/admin/v1/keys', '/admin/v1/teams', '/admin/v1/audit', '/admin/v1/models']) {
      const res = await s.app.inject({ method: 'GET', url, headers: bearer(client) });
      assert.equal(res.statusCode, 403, url);
      assert.match(res.json().error.message, /client key calls models and reads GET \/v1\/me/);
    }
    assert.equal((await s.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(client) })).statusCode, 200);
    assert.equal((await s.app.inject({ method: 'GET', url: '/admin/v1/keys' })).statusCode, 401);
  } finally {
    await s.close();
  }
});

test('rotate keeps the id and replays its secret; block, unblock, patch and revoke; the audit log records them', async () => {
  const s = await setupAdmin();
  try {
    const created = (await s.app.inject({ method: 'POST', url: '/admin/v1/keys', headers: asMaster({ 'idempotency-key': 'c' }), payload: { name: 'svc' } })).json();
    const id = created.key.id as string;
    const noKey = await s.app.inject({ method: 'POST', url: `/admin/v1/keys/${id}/rotate`, headers: asMaster(), payload: {} });
    assert.equal(noKey.statusCode, 400);
    const rotate = () => s.app.inject({ method: 'POST', url: '/admin/v1/keys/svc/rotate', headers: asMaster({ 'idempotency-key': 'rot-1' }), payload: { grace: '1h' } });
    const r1 = await rotate();
    assert.equal(r1.statusCode, 200, r1.body);
    assert.equal(r1.json().key.id, id, 'the public id survives rotation');
    assert.notEqual(r1.json().secret, created.secret);
    const r2 = await rotate();
    assert.equal(r2.json().secret, r1.json().secret, 'a retried rotation returns the same new secret');
    assert.equal(s.store.lookup(created.secret).state, 'grace');
    assert.equal(s.store.lookup(r1.json().secret).state, 'active');

    const block = await s.app.inject({ method: 'POST', url: `/admin/v1/keys/${id}/block`, headers: asMaster() });
    assert.equal(block.json().state, 'blocked');
    assert.equal((await s.app.inject({ method: 'POST', url: `/admin/v1/keys/${id}/unblock`, headers: asMaster() })).json().state, 'active');
    const patched = await s.app.inject({
      method: 'PATCH',
      url: `/admin/v1/keys/${id}`,
      headers: asMaster(),
      payload: { rpm: 60, expires_at: '2099-01-01', metadata: { owner: 'ops' } },
    });
    assert.equal(patched.statusCode, 200, patched.body);
    assert.deepEqual([patched.json().rpm, patched.json().expires_at, patched.json().metadata], [60, '2099-01-01T00:00:00.000Z', { owner: 'ops' }]);
    assert.equal((await s.app.inject({ method: 'PATCH', url: `/admin/v1/keys/${id}`, headers: asMaster(), payload: { rpm: null } })).json().rpm, null);
    const revoked = await s.app.inject({ method: 'DELETE', url: `/admin/v1/keys/${id}`, headers: asMaster() });
    assert.deepEqual([revoked.json().key.state, revoked.json().already_revoked], ['revoked', false]);
    assert.equal((await s.app.inject({ method: 'DELETE', url: `/admin/v1/keys/${id}`, headers: asMaster() })).json().already_revoked, true);
    const missing = await s.app.inject({ method: 'GET', url: '/admin/v1/keys/nobody', headers: asMaster() });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().error.code, 'not_found');

    await s.audit.flush();
    const audit = await s.app.inject({ method: 'GET', url: `/admin/v1/audit?object=key:${id}`, headers: asMaster() });
    const actions = json(audit).data.map((e) => e.action);
    for (const action of ['key.create', 'key.rotate', 'key.update', 'key.revoke']) assert.ok(actions.includes(action), `${action} in ${actions.join(',')}`);
    assert.ok(!audit.body.includes(created.secret) && !audit.body.includes(r1.json().secret), 'no secret in the audit log');
    const signIns = await s.app.inject({ method: 'GET', url: '/admin/v1/audit?action=admin.sign_in', headers: asMaster() });
    const rows = json(signIns).data;
    assert.equal(rows.length, 1, 'every sign-in of this minute folded into one row');
    assert.ok((rows[0]?.count as number) >= 10);
    const verify = await s.app.inject({ method: 'GET', url: '/admin/v1/audit/verify', headers: asMaster() });
    assert.equal(verify.json().ok, true);
  } finally {
    await s.close();
  }
});

test('teams CRUD (delete refused while keys remain); usage, models and routes read-only', async () => {
  const s = await setupAdmin();
  try {
    const team = await s.app.inject({
      method: 'POST',
      url: '/admin/v1/teams',
      headers: asMaster({ 'idempotency-key': 't' }),
      payload: { name: 'research', budgets: [{ period: 'month', amount_micros: 100_000_000 }], rpm: 100 },
    });
    assert.equal(team.statusCode, 201, team.body);
    assert.equal(team.json().rpm, 100);
    const renamed = await s.app.inject({ method: 'PATCH', url: '/admin/v1/teams/research', headers: asMaster(), payload: { name: 'lab', rpm: null } });
    assert.deepEqual([renamed.json().name, renamed.json().rpm], ['lab', null]);
    await s.app.inject({ method: 'POST', url: '/admin/v1/keys', headers: asMaster({ 'idempotency-key': 'k' }), payload: { name: 'lab-bot', team: 'lab' } });
    const refused = await s.app.inject({ method: 'DELETE', url: '/admin/v1/teams/lab', headers: asMaster() });
    assert.ok(refused.statusCode >= 400 && refused.statusCode < 500, refused.body);
    await s.app.inject({ method: 'DELETE', url: '/admin/v1/keys/lab-bot', headers: asMaster() });
    assert.equal((await s.app.inject({ method: 'DELETE', url: '/admin/v1/teams/lab', headers: asMaster() })).statusCode, 200);
    assert.deepEqual(json(await s.app.inject({ method: 'GET', url: '/admin/v1/teams', headers: asMaster() })).data, []);

    const usage = await s.app.inject({ method: 'GET', url: '/admin/v1/usage?since=7d&by=model', headers: asMaster() });
    assert.equal(usage.statusCode, 200, usage.body);
    assert.equal(usage.json().by, 'model');
    assert.equal((await s.app.inject({ method: 'GET', url: '/admin/v1/usage?by=colour', headers: asMaster() })).json().error.param, 'by');
    const models = await s.app.inject({ method: 'GET', url: '/admin/v1/models', headers: asMaster() });
    assert.deepEqual(
      json(models).data.map((m) => m.id),
      ['gpt-4o'],
    );
    const routes = (await s.app.inject({ method: 'GET', url: '/admin/v1/routes', headers: asMaster() })).json();
    assert.deepEqual(routes.models[0].deployments, [{ provider: 'openai', upstream_model: 'gpt-4o-2024', weight: 1, enabled: true }]);
    assert.equal((await s.app.inject({ method: 'POST', url: '/admin/v1/routes', headers: asMaster() })).statusCode, 404, 'routes are read-only');
  } finally {
    await s.close();
  }
});

test('on PostgreSQL: pages with cursors, an idempotent create, a manager kept to its team', { skip: process.env.DATABASE_URL ? false : 'DATABASE_URL is not set' }, async () => {
  const db = await createTestDatabase('h_admin');
  const s = await setupAdmin({ keyStore: db.url });
  try {
    const post = (url: string, payload: object, key: string, headers = asMaster()) =>
      s.app.inject({ method: 'POST', url, headers: { ...headers, 'idempotency-key': key }, payload });
    assert.equal((await post('/admin/v1/teams', { name: 'team-a' }, 't')).statusCode, 201);
    const manager = (await post('/admin/v1/keys', { name: 'lead', role: 'manager', team: 'team-a' }, 'm')).json().secret as string;
    for (let i = 0; i < 5; i++) assert.equal((await post('/admin/v1/keys', { name: `bot-${i}` }, `b${i}`, bearer(manager))).statusCode, 201);
    await post('/admin/v1/keys', { name: 'elsewhere' }, 'e');
    const first = await post('/admin/v1/keys', { name: 'bot-0' }, 'b0', bearer(manager));
    assert.equal(first.headers['idempotent-replayed'], 'true');
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const res: LightMyRequestResponse = await s.app.inject({
        method: 'GET',
        url: `/admin/v1/keys?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        headers: bearer(manager),
      });
      names.push(...json(res).data.map((k) => k.name as string));
      cursor = json(res).next_cursor;
    } while (cursor !== null);
    assert.deepEqual(names.sort(), ['bot-0', 'bot-1', 'bot-2', 'bot-3', 'bot-4', 'lead']);
    assert.equal((await s.app.inject({ method: 'GET', url: '/admin/v1/audit/verify', headers: asMaster() })).json().ok, true);
  } finally {
    await s.close();
    await db.drop();
  }
});
