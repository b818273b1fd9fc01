// A call's metadata read straight from its HTTP/2 request headers (keys are lower-case on the wire; `-bin`
// values base64, possibly several comma-joined), without building grpc-js's Metadata for every call.
import type { IncomingHttpHeaders } from 'node:http2';

/** What the handlers read of a call's metadata; grpc-js's Metadata satisfies it too. */
export interface CallMetadata {
  get(key: string): (string | Buffer)[];
}

export class HeaderMetadata implements CallMetadata {
  constructor(private readonly headers: IncomingHttpHeaders) {}

  get(key: string): (string | Buffer)[] {
    const value = this.headers[key];
    if (value === undefined) return [];
    const values = Array.isArray(value) ? value : [value];
    if (!key.endsWith('-bin')) return values;
    return values.flatMap((v) => v.split(',').map((part) => Buffer.from(part.trim(), 'base64')));
  }
}

/** The peer as grpc-js names it (`ipv4:` / `ipv6:` address and port); grpc-caller.ts reads the address back. */
export function formatPeer(address: string | undefined, port: number | undefined): string {
  if (address === undefined) return 'unknown';
  return address.includes(':') ? `ipv6:[${address}]:${port ?? 0}` : `ipv4:${address}:${port ?? 0}`;
}
