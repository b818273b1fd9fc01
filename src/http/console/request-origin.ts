// What the console needs to know about where a request came from: whether its peer is a trusted proxy, the
// base path a proxy mounted Herd under (X-Forwarded-Prefix) and whether the client used TLS (X-Forwarded-Proto).
// Forwarding headers count only from server.trusted_proxies; from anyone else they are ignored.
import type { IncomingMessage } from 'node:http';
import { type BlockList, isIP } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createCidrList } from '../../config/server-limits-config-schema.ts';
import { normalizeBasePath } from '../../config/ui-config-schema.ts';

export class RequestOrigin {
  private readonly trusted: BlockList | undefined;

  /** `basePath`: server.ui.base_path, already normalized ('' or `/a/b`). */
  constructor(
    trustedProxies: readonly string[],
    private readonly configuredBasePath: string,
  ) {
    this.trusted = trustedProxies.length > 0 ? createCidrList(trustedProxies) : undefined;
  }

  isTrustedPeer(req: IncomingMessage): boolean {
    if (this.trusted === undefined) return false;
    const raw = req.socket.remoteAddress ?? '';
    const address = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(raw)?.[1] ?? raw;
    const version = isIP(address);
    return version !== 0 && this.trusted.check(address, version === 4 ? 'ipv4' : 'ipv6');
  }

  /** `<base>` for the cookie's Path: a valid X-Forwarded-Prefix from a trusted proxy, else server.ui.base_path. */
  basePath(req: IncomingMessage): string {
    const header = req.headers['x-forwarded-prefix'];
    if (typeof header === 'string' && header.trim() !== '' && this.isTrustedPeer(req)) {
      const prefix = header.includes(',') ? undefined : normalizeBasePath(header);
      if (prefix !== undefined) return prefix;
    }
    return this.configuredBasePath;
  }

  /** TLS on the socket, or `X-Forwarded-Proto: https` (its first value, as the proxy nearest the client set it) from a trusted proxy. */
  isSecure(req: IncomingMessage): boolean {
    if ((req.socket as Partial<TLSSocket>).encrypted === true) return true;
    const header = req.headers['x-forwarded-proto'];
    if (typeof header !== 'string' || !this.isTrustedPeer(req)) return false;
    return header.split(',')[0]?.trim().toLowerCase() === 'https';
  }
}
