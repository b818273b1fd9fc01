// results_url's base: the Host the client used, or a trusted proxy's X-Forwarded-Proto/-Host/-Prefix; forwarding
// headers from any other peer, and hosts that are not host[:port], never reach the URL.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { createBaseUrlResolver } from '../../src/http/request-base-url.ts';

function request(peer: string, headers: IncomingMessage['headers']): IncomingMessage {
  return { headers, socket: { remoteAddress: peer, localAddress: '127.0.0.1', localPort: 8000 } } as unknown as IncomingMessage;
}

describe('createBaseUrlResolver', () => {
  const baseUrlOf = createBaseUrlResolver(['10.0.0.0/8'], '');
  const forwarded = { host: 'herd:8000', 'x-forwarded-host': 'api.example.com, inner', 'x-forwarded-proto': 'https', 'x-forwarded-prefix': '/llm' };

  it('uses the Host header when no trusted proxy forwards', () => {
    assert.equal(baseUrlOf(request('192.0.2.1', { host: 'localhost:8000' })), 'http://localhost:8000');
    assert.equal(baseUrlOf(request('192.0.2.1', forwarded)), 'http://herd:8000', "an untrusted peer's forwarding headers are ignored");
  });

  it("takes a trusted proxy's scheme, first host and prefix", () => {
    assert.equal(baseUrlOf(request('10.1.2.3', forwarded)), 'https://api.example.com/llm');
  });

  it('falls back to the socket for a missing or malformed Host, and the configured base path', () => {
    assert.equal(baseUrlOf(request('192.0.2.1', { host: 'evil.com/path?' })), 'http://127.0.0.1:8000');
    assert.equal(baseUrlOf(request('10.1.2.3', { 'x-forwarded-host': 'a b', host: '[::1]:8000' })), 'http://[::1]:8000');
    assert.equal(createBaseUrlResolver([], '/tools/herd')(request('192.0.2.1', { host: 'h' })), 'http://h/tools/herd');
  });
});
