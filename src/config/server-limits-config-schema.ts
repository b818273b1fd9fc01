// herd.yaml's server.trusted_proxies and server.limits: which peers may name the client in forwarding
// headers, and the deadlines and connection caps of the HTTP and metrics ports (docs/security.md).
import { BlockList, isIP } from 'node:net';
import { z } from 'zod';

const ms = z.number().int().min(0);
const count = z.number().int().min(0);

/** `10.0.0.0/8`, `::1/128`, or a bare address (its own /32 or /128); undefined when it is neither. */
export function parseCidr(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A BlockList holding every CIDR (validated by the schema first). */
export function createCidrList(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const parsed = parseCidr(cidr);
    if (parsed) list.addSubnet(parsed.address, parsed.prefix, parsed.family);
  }
  return list;
}

export const trustedProxiesSchema = z
  .array(z.string().refine((s) => parseCidr(s) !== undefined, 'must be an IPv4 or IPv6 address or CIDR, e.g. 10.0.0.0/8 or 127.0.0.1/32'))
  .default([])
  .describe(
    'reverse proxies (CIDRs) whose X-Forwarded-For / Forwarded headers name the client: the right-most hop not in this list is the client address used for open mode, the wrong-key lockout and logs; headers from other peers are ignored',
  );

export const serverLimitsSchema = z
  .strictObject({
    headers_timeout_ms: ms.default(20_000).describe('a request whose headers are not complete after this long is answered 408 and closed (a header trickle)'),
    request_timeout_ms: ms
      .default(120_000)
      .describe('a request whose body is not complete after this long is answered 408 and closed (a slow body); answers, streams included, are not limited; 0: no deadline'),
    keep_alive_timeout_ms: ms.default(5_000).describe('an idle keep-alive connection is closed after this long'),
    max_connections: count.default(10_000).describe('open connections per port; more are closed on arrival; 0: no cap'),
    max_connections_per_address: count
      .default(1_000)
      .describe('open connections from one peer address; more are closed on arrival (behind a proxy the peer is the proxy: raise it or set 0); 0: no cap'),
  })
  .prefault({})
  .superRefine((limits, ctx) => {
    if (limits.request_timeout_ms !== 0 && limits.headers_timeout_ms > limits.request_timeout_ms) {
      ctx.addIssue({ code: 'custom', path: ['headers_timeout_ms'], message: 'must not be greater than request_timeout_ms' });
    }
  })
  .describe('deadlines and connection caps of the HTTP and metrics ports (slow clients and connection floods)');

export type ServerLimits = z.infer<typeof serverLimitsSchema>;
