// Response compression as Triton negotiates it, shared by the HTTP app, the metrics server and the
// framework-free fast paths.
import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const deflateAsync = promisify(deflate);

/**
 * The response encoding Triton picks (CompressionTypeUsed): the highest q among identity, gzip and
 * deflate, the first listed on a tie; q=0 refuses. undefined means identity.
 */
export function parseAcceptEncoding(header: string | undefined): 'gzip' | 'deflate' | undefined {
  let best = 'identity';
  let bestWeight = 0;
  for (const item of (header ?? '').split(',')) {
    const [name = '', ...params] = item.split(';').map((part) => part.trim());
    const q = params.find((p) => /^q=/i.test(p));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    const type = name.toLowerCase();
    if ((type === 'identity' || type === 'gzip' || type === 'deflate') && weight > bestWeight) {
      best = type;
      bestWeight = weight;
    }
  }
  return best === 'gzip' || best === 'deflate' ? best : undefined;
}

/** Below this size compressing costs more than it saves. */
export const COMPRESS_MIN_BYTES = 1024;

export function compressBody(payload: string | Buffer, encoding: 'gzip' | 'deflate'): Promise<Buffer> {
  return encoding === 'gzip' ? gzipAsync(payload) : deflateAsync(payload);
}
