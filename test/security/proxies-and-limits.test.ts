// server.trusted_proxies and server.limits through the real server (#35). Without trusted proxies a local
// peer forwarding from elsewhere is not local in open mode; behind a trusted proxy the right-most untrusted
// hop is the client (open mode, the wrong-key lockout); header and body deadlines and connection caps hold.
// The deadlines are awaited as events (the server closing the socket), never timed by the test.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { parseCidr } from '../../src/config/server-limits-config-schema.ts';
import { ClientAddressResolver } from '../../src/http/resolve-client-address.ts';
import { openAICompletion } from '../gateway/helpers/gateway-fixtures.ts';
import { pause, sendJson } from '../gateway/helpers/mock-upstream.ts';
import { chat, type SecurityHerd, send, startSecurityHerd } from './security-herd.ts';

const MASTER = 'sk-herd-proxies-master-0123456789abcdef';

describe('open mode behind a proxy on the same machine', () => {
  let herd: SecurityHerd;
  before(async () => {
    herd = await startSecurityHerd();
  });
  after(() => herd.close());

  it('a local request whose X-Forwarded-For or Forwarded names another machine is refused, naming server.trusted_proxies', async () => {
    const variants: Record<string, string>[] = [{ 'x-forwarded-for': '203.0.113.9' }, { forwarded: 'for=203.0.113.9;proto=https' }, { forwarded: 'for="[2001:db8::17]:4711"' }];
    for (const headers of variants) {
      const answer = await chat(herd, headers);
      assert.equal(answer.status, 401, `${JSON.stringify(headers)}: ${answer.body}`);
      assert.match(answer.body, /server\.trusted_proxies/);
    }
    assert.equal(herd.upstream.requests.length, 0, 'the upstream was never paid');
  });

  it('plain local requests, and forwarding headers naming only this machine, stay local', async () => {
    assert.equal((await chat(herd)).status, 200);
    assert.equal((await chat(herd, { 'x-forwarded-for': '127.0.0.1' })).status, 200);
  });

  it('a local X-Forwarded-For does not hide a Forwarded header naming another machine (an unlisted proxy may write either)', async () => {
    assert.equal((await chat(herd, { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=203.0.113.9' })).status, 401);
  });
});

describe('behind a trusted proxy', () => {
  let open: SecurityHerd;
  let keyed: SecurityHerd;
  before(async () => {
    open = await startSecurityHerd({ server: { trusted_proxies: ['127.0.0.1/32', '10.0.0.0/8'] } });
    keyed = await startSecurityHerd({ server: { trusted_proxies: ['127.0.0.1'] }, masterKey: MASTER, auth: { failed_keys: { max_per_address: 2, window_s: 60 } } });
  });
  after(async () => {
    await open.close();
    await keyed.close();
  });

  it('open mode: the right-most untrusted hop is the client, whatever the client prepended', async () => {
    assert.equal((await chat(open, { 'x-forwarded-for': '203.0.113.9' })).status, 401);
    // A remote client claiming to be local: the proxy appended its real address.
    assert.equal((await chat(open, { 'x-forwarded-for': '127.0.0.1, 198.51.100.7' })).status, 401);
    assert.equal((await chat(open, { 'x-forwarded-for': '127.0.0.1, 198.51.100.7, 10.1.2.3' })).status, 401);
    // A local client through the proxy (and a chain of trusted proxies) is local.
    assert.equal((await chat(open, { 'x-forwarded-for': '127.0.0.1' })).status, 200);
    assert.equal((await chat(open, { 'x-forwarded-for': '127.0.0.1, 10.1.2.3' })).status, 200);
    // A proxy that writes only Forwarded, passing on the client's own X-Forwarded-For: not local either.
    assert.equal((await chat(open, { 'x-forwarded-for': '127.0.0.1', forwarded: 'for=198.51.100.7' })).status, 401);
  });

  it('headers from a peer that is not a trusted proxy are ignored (127.0.0.2 is not listed)', async () => {
    // Not local by its headers: a local peer Herd does not trust forwarding from another machine.
    assert.equal((await chat(open, { 'x-forwarded-for': '127.0.0.1, 203.0.113.9' }, '127.0.0.2')).status, 401);
    // And not a different client by its headers: the lockout keys on the peer, whatever it claims.
    for (let i = 0; i < 2; i++) {
      assert.equal((await chat(keyed, { 'x-forwarded-for': `198.51.100.${10 + i}`, authorization: `Bearer sk-herd-wrong-${i}` }, '127.0.0.2')).status, 401);
    }
    assert.equal((await chat(keyed, { 'x-forwarded-for': '198.51.100.99', authorization: `Bearer ${MASTER}` }, '127.0.0.2')).status, 429);
  });

  it('the wrong-key lockout counts per client behind the proxy: one guessing client does not lock out the others', async () => {
    const guesser = { 'x-forwarded-for': '198.51.100.1' };
    for (let i = 0; i < 2; i++) assert.equal((await chat(keyed, { ...guesser, authorization: `Bearer sk-herd-wrong-${i}` })).status, 401);
    assert.equal((await chat(keyed, { ...guesser, authorization: `Bearer ${MASTER}` })).status, 429);
    assert.equal((await chat(keyed, { 'x-forwarded-for': '198.51.100.2', authorization: `Bearer ${MASTER}` })).status, 200);
  });
});

describe('the client address resolver', () => {
  const peer = (remoteAddress: string, headers: Record<string, string>) => ({ socket: { remoteAddress }, headers }) as unknown as import('node:http').IncomingMessage;

  it('reads X-Forwarded-For before Forwarded, strips ports and brackets, and maps IPv4-in-IPv6', () => {
    const resolver = new ClientAddressResolver(['127.0.0.1/32', '::1/128']);
    assert.deepEqual(resolver.resolve(peer('::ffff:127.0.0.1', { 'x-forwarded-for': '198.51.100.7:5555' })), { address: '198.51.100.7' });
    assert.deepEqual(resolver.resolve(peer('::1', { forwarded: 'for="[2001:DB8::17]:4711";proto=https' })), { address: '2001:db8::17' });
    assert.deepEqual(resolver.resolve(peer('127.0.0.1', { forwarded: 'for=unknown' })), { address: 'unknown' });
    assert.deepEqual(resolver.resolve(peer('127.0.0.1', {})), { address: '127.0.0.1' });
    assert.deepEqual(resolver.resolve(peer('192.0.2.1', { 'x-forwarded-for': '127.0.0.1' })), { address: '192.0.2.1' });
  });

  it('CIDRs: addresses and prefixes of both families; anything else is refused by the schema', () => {
    assert.ok(parseCidr('10.0.0.0/8'));
    assert.ok(parseCidr('fd00::/8'));
    assert.deepEqual(parseCidr('127.0.0.1'), { address: '127.0.0.1', prefix: 32, family: 'ipv4' });
    for (const bad of ['10.0.0.0/33', 'localhost', '10.0.0.0/8/1', '', '10.0.0.0/x']) assert.equal(parseCidr(bad), undefined, bad);
  });
});

/** Connects from `from` and resolves with everything the server sent once it closes the connection. */
function openSocket(port: number, from = '127.0.0.1'): { socket: Socket; closed: Promise<string> } {
  const socket = connect({ host: '127.0.0.1', port, localAddress: from });
  let received = '';
  socket.on('data', (d: Buffer) => {
    received += d.toString('latin1');
  });
  const closed = new Promise<string>((done) => {
    socket.on('close', () => done(received));
    socket.on('error', () => undefined);
  });
  return { socket, closed };
}

async function connected(socket: Socket): Promise<void> {
  if (!socket.connecting) return;
  await new Promise<void>((done) => socket.once('connect', () => done()));
}

describe('server limits', () => {
  let herd: SecurityHerd;
  let port: number;
  before(async () => {
    herd = await startSecurityHerd({
      server: { limits: { headers_timeout_ms: 300, request_timeout_ms: 600, keep_alive_timeout_ms: 200, max_connections: 4, max_connections_per_address: 2 } },
    });
    port = Number(new URL(herd.server.httpUrl).port);
  });
  after(() => herd.close());

  it('a header trickle is answered 408 and closed at the header deadline', async () => {
    const { socket, closed } = openSocket(port);
    socket.write('GET /v2/health/live HTTP/1.1\r\nHost: x\r\nX-Slow: a');
    const answer = await closed;
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  it('a body at a trickle is answered 408 and closed at the request deadline', async () => {
    const { socket, closed } = openSocket(port);
    socket.write('POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
    const answer = await closed;
    assert.match(answer, /^HTTP\/1\.1 408 /);
  });

  it('an answer slower than the request deadline is not cut: the deadline covers receiving the request only', async () => {
    herd.upstream.setHandler(async (req, res) => {
      await pause(900);
      sendJson(res, 200, openAICompletion(String((req.body as { model?: unknown }).model), 'slow'));
    });
    const answer = await chat(herd);
    assert.equal(answer.status, 200, answer.body);
    assert.match(answer.body, /slow/);
  });

  it('an idle keep-alive connection is closed after keep_alive_timeout_ms', async () => {
    const { socket, closed } = openSocket(port);
    socket.write('GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.match(await closed, /^HTTP\/1\.1 200 /);
  });

  it('connections over the per-address cap are closed on arrival; others from that address still work', async () => {
    const held = [openSocket(port), openSocket(port)];
    await Promise.all(held.map((h) => connected(h.socket)));
    // Connections are accepted in arrival order, so the third is the one over the cap.
    const third = openSocket(port);
    assert.equal(await third.closed, '', 'closed without an answer');
    assert.equal((await send(`${herd.server.httpUrl}/v2/health/live`, { from: '127.0.0.3' })).status, 200, 'another address is unaffected');
    for (const h of held) h.socket.destroy();
    await Promise.all(held.map((h) => h.closed));
  });

  it('connections over the total cap are closed on arrival', async () => {
    const held = ['127.0.0.4', '127.0.0.5', '127.0.0.6', '127.0.0.7'].map((from) => openSocket(port, from));
    await Promise.all(held.map((h) => connected(h.socket)));
    const fifth = openSocket(port, '127.0.0.8');
    assert.equal(await fifth.closed, '', 'closed without an answer');
    for (const h of held) h.socket.destroy();
    await Promise.all(held.map((h) => h.closed));
  });
});
