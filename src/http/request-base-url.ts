// Where a client reached Herd, as an absolute URL without a trailing slash (Anthropic's results_url names it):
// the scheme, host and path prefix, from X-Forwarded-Proto/-Host/-Prefix of a trusted proxy, else the request itself.
import type { IncomingMessage } from 'node:http';
import { RequestOrigin } from './console/request-origin.ts';

/** A host[:port] (a name, IPv4 or bracketed IPv6): anything else in a header is not put into a URL. */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export type BaseUrlOf = (req: IncomingMessage) => string;

/** `basePath`: server.ui.base_path (normalized), the prefix a proxy mounts Herd under when it sends none. */
export function createBaseUrlResolver(trustedProxies: readonly string[], basePath: string): BaseUrlOf {
  const origin = new RequestOrigin(trustedProxies, basePath);
  return (req) => `${origin.isSecure(req) ? 'https' : 'http'}://${hostOf(req, origin)}${origin.basePath(req)}`;
}

function hostOf(req: IncomingMessage, origin: RequestOrigin): string {
  const forwarded = req.headers['x-forwarded-host'];
  if (typeof forwarded === 'string' && origin.isTrustedPeer(req)) {
    const first = forwarded.split(',')[0]?.trim() ?? '';
    if (HOST.test(first)) return first;
  }
  const host = req.headers.host;
  if (typeof host === 'string' && HOST.test(host)) return host;
  const local = req.socket.localAddress ?? '127.0.0.1';
  return `${local.includes(':') ? `[${local}]` : local}:${req.socket.localPort ?? 80}`;
}
