// The admin API on the real server (startHerd, herd.yaml, the real Authenticator and SQLite stores):
// every operation of the served OpenAPI document is routed (no unknown-route 404, no 405), a method the
// document does not list on a path is 405; a key made through the API works on GET /v1/me at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HerdServer, startHerd } from '../../src/app.ts';
import { parseHerdConfig } from '../../src/config/load-herd-config.ts';

const MASTER = 'sk-herd-master-key-for-the-admin-tests-0123456789';

describe('admin API on the real server', () => {
  let server: HerdServer;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-admin-e2e-'));
    const yaml = `
server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0, allow_grpc: false }
auth: { master_key_env: HERD_ADMIN_TEST_MASTER, db: ./keys.db }
billing: { currency: CNY, fx: { USD: 7.3 }, ledger: "sqlite:./ledger.db", flush_interval_ms: 20 }
providers:
  relay: { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: RELAY_API_KEY }
models:
  gpt-4.1:
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }]
`;
    server = await startHerd(parseHerdConfig(yaml, join(dir, 'herd.yaml')), { env: { HERD_ADMIN_TEST_MASTER: MASTER, RELAY_API_KEY: 'sk-up' } });
  });
  after(async () => {
    await server?.close();
  });

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${server.httpUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${MASTER}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };

  it('routes every documented operation, and only those methods', async () => {
    const doc = (await call('GET', '/admin/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    const created = await call('POST', '/admin/v1/keys', { name: 'probe' }, { 'idempotency-key': 'probe-1' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => [m.toUpperCase(), path] as const));
    assert.ok(operations.length >= 19);
    for (const [method, path] of operations) {
      const url = path.replace('{ref}', 'probe');
      if (path.endsWith('/requests/tail') || path.endsWith('.csv')) {
        // Not JSON (a stream that stays open, a CSV): the headers prove the route, then the body is let go.
        const res = await fetch(`${server.httpUrl}${url}`, { headers: { authorization: `Bearer ${MASTER}` } });
        assert.match(String(res.headers.get('content-type')), /^text\/(event-stream|csv); charset=utf-8$/);
        await res.body?.cancel();
        continue;
      }
      // A body the schema refuses is still proof of a route: the refusal comes from the route's own validation.
      const res = await call(method, url, method === 'GET' || method === 'DELETE' ? undefined : { unknown_field: 1 }, { 'idempotency-key': `op-${method}-${url}` });
      assert.notEqual(res.status, 405, `${method} ${url}`);
      assert.ok(res.status !== 404 || (res.body.error as { code?: string } | undefined)?.code === 'not_found', `${method} ${url} is routed: ${JSON.stringify(res.body)}`);
    }
    for (const path of Object.keys(doc.paths)) {
      const url = path.replace('{ref}', 'probe');
      const res = await fetch(`${server.httpUrl}${url}`, { method: 'PUT', headers: { authorization: `Bearer ${MASTER}` } });
      assert.equal(res.status, 405, `PUT ${url}`);
    }
  });

  it('a key created through the API reads itself on /v1/me; a wrong key is 401 in OpenAI shape', async () => {
    const team = await call('POST', '/admin/v1/teams', { name: 'team-a', budgets: [{ period: 'month', amount_micros: 50_000_000 }] }, { 'idempotency-key': 'team-a' });
    assert.equal(team.status, 201, JSON.stringify(team.body));
    const created = await call('POST', '/admin/v1/keys', { name: 'alice', team: 'team-a', budgets: [{ period: 'day', amount_micros: 5_000_000 }] }, { 'idempotency-key': 'alice' });
    const secret = created.body.secret as string;
    const me = await call('GET', '/v1/me', undefined, { authorization: `Bearer ${secret}` });
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.name, 'alice');
    const budgets = me.body.budgets as { owner: { kind: string }; period: string; limit: string; spent: string }[];
    assert.deepEqual(
      budgets.map((b) => [b.owner.kind, b.period, b.limit, b.spent]),
      [
        ['key', 'day', '5.00', '0.00'],
        ['team', 'month', '50.00', '0.00'],
      ],
    );
    const forbidden = await call('GET', '/admin/v1/keys', undefined, { authorization: `Bearer ${secret}` });
    assert.equal(forbidden.status, 403);
    const wrong = await call('GET', '/v1/me', undefined, { authorization: 'Bearer sk-herd-wrong' });
    assert.equal(wrong.status, 401);
    assert.equal((wrong.body.error as { type: string }).type, 'invalid_request_error');
  });
});
