// One JSON answer of a gateway exchange in one write, compressed when the client asks and it is worth it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { COMPRESS_MIN_BYTES, compressBody, parseAcceptEncoding } from './accept-encoding.ts';
import type { OutHeaders } from './herd-headers.ts';

export async function writeJsonAnswer(req: IncomingMessage, res: ServerResponse, closing: boolean, status: number, headers: OutHeaders, text: string): Promise<void> {
  headers['content-type'] = 'application/json';
  // During shutdown, answers close their connection so keep-alive clients do not hold the drain open.
  if (closing) headers['connection'] = 'close';
  let payload: Buffer | string = text;
  const accept = req.headers['accept-encoding'];
  if (accept !== undefined && text.length >= COMPRESS_MIN_BYTES) {
    const encoding = parseAcceptEncoding(accept);
    if (encoding !== undefined) {
      payload = await compressBody(text, encoding);
      headers['content-encoding'] = encoding;
    }
  }
  headers['content-length'] = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  if (res.destroyed) return;
  res.writeHead(status, headers);
  res.end(payload);
}
