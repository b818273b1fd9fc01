// What held in #35's attack run, each kept by a test through real sockets and the real auth path. Items an
// existing test already covers are named here, not repeated:
// - admin needs the master key: test/http/admin-routes.test.ts, test/e2e/gateway-security.test.ts ("admin endpoints …");
// - the lockout ignores forwarding headers from untrusted peers: test/security/proxies-and-limits.test.ts;
// - 100 MB bodies and compression bombs stopped at the limit: test/e2e/gateway-security.test.ts ("every route has a
//   body limit", with a 16 KB limit and a gzip body inflating past it: the same code path as 64 MB, without the upload);
// - log_file / trace_file refused over HTTP and gRPC: test/e2e/trace-and-logging-settings.test.ts.
//
// A non-loopback peer cannot be made on one machine without a second interface: Herd counts all of 127/8 as
// loopback, so 127.0.0.2 is still local. "Forwarding headers never open open mode to a remote peer" is therefore
// proven twice: at unit level, the authenticator with a remote client address; and over HTTP through a trusted
// proxy, where the resolved client is a remote address (test/security/proxies-and-limits.test.ts does more).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { TestKeys } from '../helpers/test-keys.ts';
import { Authenticator } from '../../src/gateway/keys/authenticator.ts';
import { parseExposition } from '../metrics/parse-exposition.ts';
import { chat, type SecurityHerd, send, startSecurityHerd } from './security-herd.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';

const MASTER = 'sk-herd-held-master-0123456789abcdefABCDEF';

/** One raw HTTP/1.1 exchange: the status line's code, or 0 when the server closed without answering. */
function raw(port: number, text: string): Promise<number> {
  return new Promise((done) => {
    const socket = connect({ host: '127.0.0.1', port });
    let received = '';
    socket.on('data', (d: Buffer) => {
      received += d.toString('latin1');
    });
    socket.on('error', () => undefined);
    socket.on('close', () => done(Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1] ?? 0)));
    socket.end(text);
  });
}

describe('open mode and forwarding headers', () => {
  it('the authenticator refuses a remote client in open mode, whatever it claims', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-held-'));
    const store = await TestKeys.open(join(dir, 'keys.db'));
    try {
      const auth = new Authenticator({ store: store.store });
      assert.ok(auth.isOpen());
      for (const client of ['203.0.113.9', { address: '203.0.113.9' }, { address: '127.0.0.1', forwardedByUntrustedPeer: true }]) {
        const result = auth.authenticate('Bearer anything', client);
        assert.ok(result instanceof Error && (result as { code?: string }).code === 'UNAUTHENTICATED', JSON.stringify(client));
      }
      assert.ok(!(auth.authenticate(undefined, '127.0.0.1') instanceof Error));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('over HTTP through a trusted proxy, a remote client named by the proxy is refused in open mode', async () => {
    const herd = await startSecurityHerd({ server: { trusted_proxies: ['127.0.0.1/32'] } });
    try {
      assert.equal((await chat(herd, { 'x-forwarded-for': '203.0.113.9' })).status, 401);
      assert.equal((await chat(herd, { forwarded: 'for=203.0.113.9' })).status, 401);
      assert.equal(herd.upstream.requests.length, 0);
    } finally {
      await herd.close();
    }
  });
});

describe('a keyed gateway', () => {
  let herd: SecurityHerd;
  let store: TestKeys;
  let key: string;
  let port: number;
  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'herd-held-keys-'));
    store = await TestKeys.open(join(dir, 'keys.db'));
    key = (await store.create({ name: "team ' OR '1'='1", allowedModels: '*' })).secret;
    herd = await startSecurityHerd({ masterKey: MASTER, keyDb: join(dir, 'keys.db'), server: { http_max_input_size: 64 * 1024 }, auth: { failed_keys: { max_per_address: 0 } } });
    port = Number(new URL(herd.server.httpUrl).port);
  });
  after(async () => {
    await herd.close();
    await store.close();
  });

  it('altered, truncated and prefix keys are refused; the key itself works', async () => {
    const altered = `${key.slice(0, -1)}${key.endsWith('a') ? 'b' : 'a'}`;
    for (const wrong of [altered, key.slice(0, -1), key.slice(0, 12), `${key}x`, key.toUpperCase(), ` ${key.slice(1)}`]) {
      assert.equal((await chat(herd, { authorization: `Bearer ${wrong}` })).status, 401, wrong);
    }
    assert.equal((await chat(herd, { authorization: `Bearer ${key}` })).status, 200);
  });

  it('SQL metacharacters in keys and model names are data: refused or not found, never a 500, and keys still work', async () => {
    for (const wrong of ["' OR '1'='1", "sk-herd-x'; DROP TABLE keys;--", 'sk-herd-\\" OR 1=1 --']) {
      assert.equal((await chat(herd, { authorization: `Bearer ${wrong}` })).status, 401, wrong);
    }
    const answer = await chat(herd, { authorization: `Bearer ${key}` }, undefined, "gpt-test'; DROP TABLE keys;--");
    assert.ok(answer.status >= 400 && answer.status < 500, answer.body);
    assert.equal((await chat(herd, { authorization: `Bearer ${key}` })).status, 200);
  });

  it('/metrics parses strictly after hostile model names were requested', async () => {
    await chat(herd, { authorization: `Bearer ${key}` }, undefined, 'evil"} 1\nherd_fake_total{x="');
    const text = (await send(`${herd.server.metricsUrl}/metrics`)).body;
    assert.doesNotThrow(() => parseExposition(text));
    assert.doesNotMatch(text, /^herd_fake_total/m);
  });

  it('odd Host headers, absolute-form targets and encoded dot segments never reach /admin or the gateway without a key', async () => {
    const requests = [
      'GET /admin/usage HTTP/1.1\r\nHost: localhost\r\n\r\n',
      'GET /admin/usage HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-Forwarded-Host: localhost\r\n\r\n',
      'GET http://localhost/admin/usage HTTP/1.1\r\nHost: evil.example\r\n\r\n',
      'GET /v1/../admin/usage HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/%2e%2e/admin/usage HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/%2E%2E%2Fadmin/usage HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v2/..%2f..%2fadmin/usage HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET //admin/usage HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/models HTTP/1.1\r\nHost: \r\n\r\n',
      'GET http://127.0.0.1/v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n',
      'POST /v1/./chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    ];
    const paid = herd.upstream.requests.length;
    for (const text of requests) {
      const status = await raw(port, text);
      assert.ok(status === 0 || (status >= 400 && status < 500), `${JSON.stringify(text)} answered ${status}`);
    }
    assert.equal(herd.upstream.requests.length, paid, 'no keyless request reached the upstream');
  });

  it('revocation is immediate: the next request with a revoked key is refused', async () => {
    const other = await store.create({ name: 'short-lived', allowedModels: '*' });
    assert.equal((await chat(herd, { authorization: `Bearer ${other.secret}` })).status, 200);
    await store.revoke(other.key.id);
    assert.equal((await chat(herd, { authorization: `Bearer ${other.secret}` })).status, 401);
  });

  it('__proto__ in a JSON body pollutes no prototype', async () => {
    const body = '{"model":"gpt-test","messages":[{"role":"user","content":"hi"}],"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}';
    const answer = await send(`${herd.server.httpUrl}/v1/chat/completions`, { headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body });
    assert.ok(answer.status < 500, answer.body);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
    assert.equal((Object.prototype as { polluted?: unknown }).polluted, undefined);
  });

  it('header limits: an oversized header block is 431, and the server carries on', async () => {
    const status = await raw(port, `GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    assert.equal(status, 431);
    assert.equal((await send(`${herd.server.httpUrl}/v2/health/live`)).status, 200);
  });
});
