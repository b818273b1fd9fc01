// The client address of an HTTP request, resolved once per request: the peer's address, or behind a proxy
// listed in server.trusted_proxies the right-most X-Forwarded-For (else Forwarded: for=) hop it does not trust.
import type { IncomingMessage } from 'node:http';
import { type BlockList, isIP, type Socket } from 'node:net';
import { createCidrList } from '../config/server-limits-config-schema.ts';
import { type ClientAddress, isLoopbackAddress } from '../gateway/keys/client-address.ts';

/** Hops read from the right; a longer chain is cut (a client can prepend as many as fit in the headers). */
const MAX_HOPS = 32;
/** A hop that is no address ("unknown", an obfuscated name) is kept as a label this long at most. */
const MAX_LABEL = 64;

export class ClientAddressResolver {
  private readonly trusted: BlockList | undefined;
  private readonly resolved = new WeakMap<IncomingMessage, ClientAddress>();

  constructor(trustedProxies: readonly string[] = []) {
    this.trusted = trustedProxies.length > 0 ? createCidrList(trustedProxies) : undefined;
  }

  resolve(req: IncomingMessage): ClientAddress {
    let client = this.resolved.get(req);
    if (client === undefined) {
      client = this.compute(req);
      this.resolved.set(req, client);
    }
    return client;
  }

  private compute(req: IncomingMessage): ClientAddress {
    const peer = normalizeAddress(req.socket.remoteAddress ?? '');
    const xff = req.headers['x-forwarded-for'];
    const forwarded = req.headers.forwarded;
    if (xff === undefined && forwarded === undefined) return { address: peer };
    if (!this.isTrusted(peer)) {
      // Headers from an untrusted peer are ignored, but a local one naming another machine in either header is
      // a proxy on this host (which of the two it writes is unknown, so both count).
      const named = [...(xff !== undefined ? parseXForwardedFor(xff) : []), ...(forwarded !== undefined ? parseForwarded(forwarded) : [])];
      if (isLoopbackAddress(peer) && named.some((hop) => !isLoopbackAddress(hop))) return { address: peer, forwardedByUntrustedPeer: true };
      return { address: peer };
    }
    // X-Forwarded-For first: it is what most proxies append to; Forwarded only when it is absent, or when
    // X-Forwarded-For says local and Forwarded does not (a client may have sent the header its proxy does not write).
    const fromXff = xff !== undefined ? this.rightmostUntrusted(parseXForwardedFor(xff), peer) : undefined;
    const fromForwarded = forwarded !== undefined ? this.rightmostUntrusted(parseForwarded(forwarded), peer) : undefined;
    if (fromXff === undefined) return { address: fromForwarded ?? peer };
    if (fromForwarded !== undefined && isLoopbackAddress(fromXff) && !isLoopbackAddress(fromForwarded)) return { address: fromForwarded };
    return { address: fromXff };
  }

  private rightmostUntrusted(hops: readonly string[], peer: string): string {
    let client = peer;
    for (const hop of hops.slice(-MAX_HOPS).reverse()) {
      client = hop;
      if (!this.isTrusted(hop)) break;
    }
    return client;
  }

  private isTrusted(address: string): boolean {
    if (this.trusted === undefined) return false;
    const version = isIP(address);
    return version !== 0 && this.trusted.check(address, version === 4 ? 'ipv4' : 'ipv6');
  }
}

/** Requests on a socket of a server that has none registered resolve with no trusted proxies. */
const DEFAULT_RESOLVER = new ClientAddressResolver();
const resolvers = new WeakMap<Socket, ClientAddressResolver>();

/** Called for each connection of a server whose requests `resolver` resolves (create-http-app.ts). */
export function useClientAddressResolver(socket: Socket, resolver: ClientAddressResolver): void {
  resolvers.set(socket, resolver);
}

/** The client address of `req`, by its server's resolver (computed once per request). */
export function clientAddressOf(req: IncomingMessage): ClientAddress {
  return (resolvers.get(req.socket) ?? DEFAULT_RESOLVER).resolve(req);
}

function parseXForwardedFor(value: string | string[]): string[] {
  const text = Array.isArray(value) ? value.join(',') : value;
  return text
    .split(',')
    .map((hop) => normalizeHop(hop.trim()))
    .filter((hop) => hop !== '');
}

/** RFC 7239: `for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"`; elements without for= are skipped. */
function parseForwarded(value: string | string[]): string[] {
  const text = Array.isArray(value) ? value.join(',') : value;
  const hops: string[] = [];
  for (const element of text.split(',')) {
    for (const pair of element.split(';')) {
      const eq = pair.indexOf('=');
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== 'for') continue;
      const hop = normalizeHop(
        pair
          .slice(eq + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1'),
      );
      if (hop !== '') hops.push(hop);
    }
  }
  return hops;
}

/** An address without brackets or port; anything else as a short printable label. */
function normalizeHop(hop: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(hop);
  if (bracketed?.[1] !== undefined && isIP(bracketed[1]) === 6) return normalizeAddress(bracketed[1]);
  if (isIP(hop) !== 0) return normalizeAddress(hop);
  const withPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  if (withPort?.[1] !== undefined && isIP(withPort[1]) === 4) return withPort[1];
  return hop.replace(/[^\w.:-]/g, '_').slice(0, MAX_LABEL);
}

/** IPv4-mapped IPv6 (::ffff:203.0.113.9) as plain IPv4, so one client has one address in every check. */
function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped?.[1] ?? address.toLowerCase();
}
