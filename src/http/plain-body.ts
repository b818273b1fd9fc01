// What both framework-free fast paths take: a body of known length, no content or transfer coding,
// within the size limit, read whole. Anything else goes to Fastify, which answers it in full.
import type { IncomingMessage } from 'node:http';

export function hasPlainBody(req: IncomingMessage, maxInputSize: number): boolean {
  const headers = req.headers;
  if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
  const length = Number(headers['content-length']);
  return Number.isInteger(length) && length >= 0 && length <= maxInputSize;
}

/** Calls `done` with the whole body once it has arrived. */
export function readBody(req: IncomingMessage, done: (body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => done(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
}
