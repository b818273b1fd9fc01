// Console sign-in on the real server: admin, viewer and master keys sign in, a client key is 403 and a wrong
// key 401, failed sign-ins are throttled per client address (X-Forwarded-For only from the trusted proxy), the
// cookie's attributes (Path from X-Forwarded-Prefix and Secure from X-Forwarded-Proto only via that proxy),
// CSRF on mutating admin calls, sign-out and a revoked key end the session, and the audit log records it all.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { openKeyStore } from '../../../src/gateway/keys/open-key-store.ts';
import { type Answer, type ConsoleTestServer, cookieOf, MASTER, send, startConsoleTestServer } from './console-test-server.ts';

const UNTRUSTED = '127.0.0.1';
const PROXY = '127.0.0.2';

describe('console sessions', () => {
  let server: ConsoleTestServer;
  const secrets: Record<string, string> = {};
  const master = { authorization: `Bearer ${MASTER}` };

  const signIn = (key: string, from = UNTRUSTED, headers: Record<string, string> = {}) => send(server.url, '/ui/api/session', { method: 'POST', body: { key }, from, headers });
  const errorOf = (answer: Answer) => answer.json().error as { code: string | null; type: string; message: string };

  before(async () => {
    server = await startConsoleTestServer();
    for (const role of ['admin', 'viewer', 'client', 'manager'] as const) {
      const created = await send(server.url, '/admin/v1/keys', {
        method: 'POST',
        headers: { ...master, 'idempotency-key': `k-${role}` },
        body: { name: `${role}-key`, role, ...(role === 'manager' ? { team: 'ops' } : {}) },
      });
      if (role === 'manager' && created.status !== 201) {
        await send(server.url, '/admin/v1/teams', { method: 'POST', headers: { ...master, 'idempotency-key': 'team-ops' }, body: { name: 'ops' } });
        const retry = await send(server.url, '/admin/v1/keys', {
          method: 'POST',
          headers: { ...master, 'idempotency-key': 'k-manager-2' },
          body: { name: 'manager-key', role, team: 'ops' },
        });
        secrets[role] = retry.json().secret as string;
        continue;
      }
      assert.equal(created.status, 201, created.text);
      secrets[role] = created.json().secret as string;
    }
  });
  after(async () => server?.close());

  it('signs in with an admin key: SessionJson and an HttpOnly, SameSite=Strict cookie on Path=/', async () => {
    const answer = await signIn(secrets.admin as string);
    assert.equal(answer.status, 200, answer.text);
    const body = answer.json() as { actor: { name: string; role: string }; csrf_token: string; expires_at: number; server: Record<string, unknown> };
    assert.equal(body.actor.name, 'admin-key');
    assert.equal(body.actor.role, 'admin');
    assert.match(body.csrf_token, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(body.expires_at > Date.now() + 28_000_000);
    assert.deepEqual({ ...body.server, version: typeof body.server.version }, { version: 'string', currency: 'CNY', gateway: true, serving: false, model_control_mode: 'none' });
    const cookie = answer.headers['set-cookie']?.[0] ?? '';
    assert.match(cookie, /^herd_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict$/);
    assert.equal(answer.text.includes(secrets.admin as string), false, 'the key is never echoed');
    const read = await send(server.url, '/ui/api/session', { headers: { cookie: cookieOf(answer) } });
    assert.equal(read.status, 200);
    assert.equal(read.json().csrf_token, body.csrf_token);
  });

  it('signs in with a viewer key and the master key; a client or manager key is 403, a wrong key 401', async () => {
    const viewer = await signIn(secrets.viewer as string);
    assert.equal(viewer.status, 200);
    assert.equal((viewer.json().actor as { role: string }).role, 'viewer');
    const byMaster = await signIn(MASTER);
    assert.equal((byMaster.json().actor as { id: string }).id, 'master');
    for (const role of ['client', 'manager']) {
      const refused = await signIn(secrets[role] as string, '127.0.0.9');
      assert.equal(refused.status, 403, role);
      assert.equal(refused.headers['set-cookie'], undefined);
    }
    const wrong = await signIn('sk-herd-hk_nothere-wrongwrongwrong', '127.0.0.10');
    assert.equal(wrong.status, 401);
    assert.equal(errorOf(wrong).code, 'invalid_api_key');
  });

  it('GET /ui/api/session without a cookie is 401', async () => {
    assert.equal((await send(server.url, '/ui/api/session')).status, 401);
  });

  it('throttles failed sign-ins per address with 429 and Retry-After; X-Forwarded-For counts only from the trusted proxy', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await signIn('wrong-key', '127.0.0.3', { 'x-forwarded-for': `10.0.0.${i}` })).status, 401);
    const throttled = await signIn(secrets.admin as string, '127.0.0.3', { 'x-forwarded-for': '10.0.0.99' });
    assert.equal(throttled.status, 429, 'an untrusted peer is one address whatever it forwards');
    assert.ok(Number(throttled.headers['retry-after']) > 0);
    assert.equal((await signIn(secrets.admin as string, '127.0.0.4')).status, 200, 'another address is unaffected');
    for (let i = 0; i < 3; i++) assert.equal((await signIn('wrong-key', PROXY, { 'x-forwarded-for': '10.1.1.1' })).status, 401);
    assert.equal((await signIn(secrets.admin as string, PROXY, { 'x-forwarded-for': '10.1.1.1' })).status, 429);
    assert.equal((await signIn(secrets.admin as string, PROXY, { 'x-forwarded-for': '10.1.1.2' })).status, 200, 'behind the trusted proxy each client has its own count');
  });

  it('takes Path from X-Forwarded-Prefix and Secure from X-Forwarded-Proto only from the trusted proxy', async () => {
    const forwarded = { 'x-forwarded-prefix': '/tools/herd', 'x-forwarded-proto': 'https' };
    const viaProxy = (await signIn(secrets.viewer as string, PROXY, forwarded)).headers['set-cookie']?.[0] ?? '';
    assert.match(viaProxy, /; Path=\/tools\/herd\/;/);
    assert.match(viaProxy, /; Secure$/);
    const direct = (await signIn(secrets.viewer as string, UNTRUSTED, forwarded)).headers['set-cookie']?.[0] ?? '';
    assert.match(direct, /; Path=\/;/);
    assert.doesNotMatch(direct, /Secure/);
    const climbing = (await signIn(secrets.viewer as string, PROXY, { 'x-forwarded-prefix': '/a/../b' })).headers['set-cookie']?.[0] ?? '';
    assert.match(climbing, /; Path=\/;/, 'an invalid prefix is ignored');
  });

  it('authenticates admin calls by cookie; a mutating one needs the CSRF token', async () => {
    const answer = await signIn(secrets.admin as string);
    const cookie = cookieOf(answer);
    const csrf = answer.json().csrf_token as string;
    assert.equal((await send(server.url, '/admin/v1/keys', { headers: { cookie } })).status, 200);
    const forged = await send(server.url, '/admin/v1/keys', { method: 'POST', headers: { cookie, 'idempotency-key': 'csrf-1' }, body: { name: 'forged' } });
    assert.equal(forged.status, 403);
    assert.deepEqual({ type: errorOf(forged).type, code: errorOf(forged).code }, { type: 'permission_error', code: 'csrf_failed' });
    assert.match(errorOf(forged).message, /CSRF/);
    const wrongToken = await send(server.url, '/admin/v1/keys', {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': 'nope', 'idempotency-key': 'csrf-2' },
      body: { name: 'forged' },
    });
    assert.equal(wrongToken.status, 403);
    const made = await send(server.url, '/admin/v1/keys', { method: 'POST', headers: { cookie, 'x-csrf-token': csrf, 'idempotency-key': 'csrf-3' }, body: { name: 'by-console' } });
    assert.equal(made.status, 201, made.text);
    const viewer = await signIn(secrets.viewer as string);
    const viewerCall = await send(server.url, '/admin/v1/keys', {
      method: 'POST',
      headers: { cookie: cookieOf(viewer), 'x-csrf-token': viewer.json().csrf_token as string, 'idempotency-key': 'csrf-4' },
      body: { name: 'by-viewer' },
    });
    assert.equal(viewerCall.status, 403, 'a viewer session reads only');
  });

  it('sign-out needs the CSRF token, clears the cookie and ends the session', async () => {
    const answer = await signIn(secrets.admin as string);
    const cookie = cookieOf(answer);
    assert.equal((await send(server.url, '/ui/api/session', { method: 'DELETE', headers: { cookie } })).status, 403);
    const out = await send(server.url, '/ui/api/session', { method: 'DELETE', headers: { cookie, 'x-csrf-token': answer.json().csrf_token as string } });
    assert.equal(out.status, 204);
    assert.match(out.headers['set-cookie']?.[0] ?? '', /^herd_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict$/);
    assert.equal((await send(server.url, '/ui/api/session', { headers: { cookie } })).status, 401);
    assert.equal((await send(server.url, '/admin/v1/keys', { headers: { cookie } })).status, 401);
  });

  it("sign-out closes the session's live tail, and only that session's", async () => {
    const mine = await signIn(secrets.admin as string);
    const other = await signIn(secrets.admin as string);
    const openTail = (cookie: string) =>
      new Promise<{ text: () => string; ended: Promise<void> }>((resolve, reject) => {
        const url = new URL(server.url);
        const req = httpRequest({ host: url.hostname, port: url.port, path: '/admin/v1/requests/tail', headers: { cookie }, agent: false }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          const ended = new Promise<void>((done) => res.on('close', () => done()));
          resolve({ text: () => text, ended });
        });
        req.on('error', reject);
        req.end();
      });
    const tail = await openTail(cookieOf(mine));
    const otherTail = await openTail(cookieOf(other));
    const out = await send(server.url, '/ui/api/session', { method: 'DELETE', headers: { cookie: cookieOf(mine), 'x-csrf-token': mine.json().csrf_token as string } });
    assert.equal(out.status, 204);
    await tail.ended;
    assert.match(tail.text(), /event: closed\ndata: \{"reason":"signed_out"\}/);
    assert.doesNotMatch(otherTail.text(), /event: closed/, "the same key's other session keeps its tail");
    await send(server.url, '/ui/api/session', { method: 'DELETE', headers: { cookie: cookieOf(other), 'x-csrf-token': other.json().csrf_token as string } });
    await otherTail.ended;
  });

  it("a revoked key's session stops working", async () => {
    const created = await send(server.url, '/admin/v1/keys', { method: 'POST', headers: { ...master, 'idempotency-key': 'k-doomed' }, body: { name: 'doomed', role: 'admin' } });
    const answer = await signIn(created.json().secret as string);
    const cookie = cookieOf(answer);
    assert.equal((await send(server.url, '/admin/v1/keys', { headers: { cookie } })).status, 200);
    assert.equal((await send(server.url, '/admin/v1/keys/doomed', { method: 'DELETE', headers: master })).status, 200);
    const after = await send(server.url, '/admin/v1/keys', { headers: { cookie } });
    assert.equal(after.status, 401);
    assert.equal(errorOf(after).code, 'invalid_api_key');
    assert.equal((await send(server.url, '/ui/api/session', { headers: { cookie } })).status, 401);
  });

  it('audits sign-ins, failed sign-ins and sign-outs, never the key (read after close: the aggregator writes then)', async () => {
    await server.close();
    const store = await openKeyStore(`sqlite:${join(server.dir, 'keys.db')}`);
    try {
      const page = await store.listAudit({ limit: 500 });
      const console = page.items.filter((e) => e.action.startsWith('console.'));
      const actions = new Set(console.map((e) => e.action));
      assert.deepEqual([...actions].sort(), ['console.sign_in', 'console.sign_in_failed', 'console.sign_out']);
      const failed = console.filter((e) => e.action === 'console.sign_in_failed');
      assert.ok(
        failed.some((e) => e.sourceIp === '10.1.1.1'),
        'the forwarded client address behind the trusted proxy',
      );
      assert.ok(failed.some((e) => e.sourceIp === '127.0.0.3'));
      const text = JSON.stringify(page.items);
      for (const secret of [...Object.values(secrets), MASTER]) assert.equal(text.includes(secret), false);
    } finally {
      await store.close();
    }
  });
});
