// Who sent a request, as the transport resolved it (src/http/resolve-client-address.ts): the address open
// mode, the wrong-key lockout and logs use, and whether an untrusted local peer forwarded it from elsewhere.

export interface ClientAddress {
  /** The client's address: the peer's, or the right-most untrusted hop behind a trusted proxy. */
  address: string;
  /**
   * Set when a loopback peer that is not a trusted proxy sent forwarding headers naming another machine:
   * a proxy on this host that server.trusted_proxies does not list. Open mode refuses such a request.
   */
  forwardedByUntrustedPeer?: boolean;
}

export function isLoopbackAddress(address: string): boolean {
  return address === '::1' || /^(?:::ffff:)?127\./i.test(address);
}
