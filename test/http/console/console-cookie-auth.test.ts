// The session cookie outside the admin API: the playground's POST /v1/chat/completions (fast path included)
// with the CSRF token works for an admin session and is 403 for a viewer or without the token; a restricted
// /v2 group (model-repository needs the master key) passes a master-key session only.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type ConsoleTestServer, cookieOf, MASTER, send, startConsoleTestServer } from './console-test-server.ts';

describe('the session cookie on /v1 and /v2', () => {
  let server: ConsoleTestServer;
  const sessions: Record<string, { cookie: string; csrf: string }> = {};
  const chat = { model: 'gpt-4.1', messages: [{ role: 'user', content: 'hi' }] };

  before(async () => {
    server = await startConsoleTestServer();
    for (const role of ['admin', 'viewer'] as const) {
      const created = await send(server.url, '/admin/v1/keys', {
        method: 'POST',
        headers: { authorization: `Bearer ${MASTER}`, 'idempotency-key': `k-${role}` },
        body: { name: `${role}-key`, role },
      });
      assert.equal(created.status, 201, created.text);
      const signedIn = await send(server.url, '/ui/api/session', { method: 'POST', body: { key: created.json().secret } });
      sessions[role] = { cookie: cookieOf(signedIn), csrf: signedIn.json().csrf_token as string };
    }
    const byMaster = await send(server.url, '/ui/api/session', { method: 'POST', body: { key: MASTER } });
    sessions.master = { cookie: cookieOf(byMaster), csrf: byMaster.json().csrf_token as string };
  });
  after(async () => server?.close());

  const as = (who: string, csrf = true) => {
    const s = sessions[who] as { cookie: string; csrf: string };
    return { cookie: s.cookie, ...(csrf ? { 'x-csrf-token': s.csrf } : {}) };
  };

  it('the playground: an admin session with its CSRF token calls a model', async () => {
    const answer = await send(server.url, '/v1/chat/completions', { method: 'POST', headers: as('admin'), body: chat });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(((answer.json().choices as { message: { content: string } }[])[0] as { message: { content: string } }).message.content, 'ok');
    assert.equal(server.upstream.requests.at(-1)?.headers.cookie, undefined, 'the cookie never reaches the upstream');
  });

  it('is 403 for a viewer session and without the CSRF token; 401 after sign-out', async () => {
    const viewer = await send(server.url, '/v1/chat/completions', { method: 'POST', headers: as('viewer'), body: chat });
    assert.equal(viewer.status, 403);
    const noToken = await send(server.url, '/v1/chat/completions', { method: 'POST', headers: as('admin', false), body: chat });
    assert.equal(noToken.status, 403);
    assert.equal((noToken.json().error as { code: string }).code, 'csrf_failed');
    const chunked = await send(server.url, '/v1/chat/completions', { method: 'POST', headers: { ...as('admin', false), 'content-encoding': 'identity' }, body: chat });
    assert.equal(chunked.status, 403, 'the Fastify route (not the fast path) refuses it the same');
  });

  it('a Bearer key still wins over a cookie', async () => {
    const answer = await send(server.url, '/v1/chat/completions', {
      method: 'POST',
      headers: { cookie: sessions.viewer?.cookie ?? '', authorization: `Bearer ${MASTER}` },
      body: chat,
    });
    assert.equal(answer.status, 200, answer.text);
  });

  it('a restricted /v2 group passes a master-key session with its CSRF token, not an admin key session', async () => {
    assert.equal((await send(server.url, '/v2/repository/index', { method: 'POST', body: {} })).status, 401);
    const byMaster = await send(server.url, '/v2/repository/index', { method: 'POST', headers: as('master'), body: {} });
    assert.equal(byMaster.status, 200, byMaster.text);
    assert.equal((await send(server.url, '/v2/repository/index', { method: 'POST', headers: as('master', false), body: {} })).status, 403);
    assert.equal((await send(server.url, '/v2/repository/index', { method: 'POST', headers: as('admin'), body: {} })).status, 403);
  });
});
