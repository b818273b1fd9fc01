// Request bodies: gzip/deflate Content-Encoding is undone before parsing, and the size limit
// applies to the decoded bytes so a small compressed body cannot expand past it.
import { Transform, type Readable } from 'node:stream';
import { createGunzip, createInflate } from 'node:zlib';
import { HerdError } from '../core/errors.ts';

export function decodeContentEncoding(payload: Readable, encoding: string | undefined, limit: number): Readable {
  const kind = (encoding ?? 'identity').trim().toLowerCase();
  if (kind === 'identity' || kind === '') return payload;
  let inflater: Transform;
  if (kind === 'gzip' || kind === 'x-gzip') inflater = createGunzip();
  else if (kind === 'deflate') inflater = createInflate();
  else throw new HerdError('UNSUPPORTED', `unsupported Content-Encoding '${encoding}': use gzip, deflate or identity`);
  let received = 0;
  let decoded = 0;
  payload.on('data', (chunk: Buffer) => {
    received += chunk.length;
  });
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      decoded += chunk.length;
      if (decoded > limit) {
        done(new HerdError('PAYLOAD_TOO_LARGE', `decompressed request body exceeds the maximum input size of ${limit} bytes; use --http-max-input-size to increase the limit`));
        return;
      }
      done(null, chunk);
    },
  });
  inflater.on('error', (err) => counter.destroy(new HerdError('INVALID_ARG', `failed to decompress ${kind} request body: ${err.message}`)));
  payload.on('error', (err) => counter.destroy(err));
  const out = payload.pipe(inflater).pipe(counter);
  // Fastify compares Content-Length with the bytes received on the wire, not the decoded ones.
  Object.defineProperty(out, 'receivedEncodedLength', { get: () => received });
  return out;
}
