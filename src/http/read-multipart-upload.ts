// A multipart/form-data body read as it arrives (@fastify/busboy): text fields into a map, the one file part
// handed to `storeFile` as a stream (never whole in memory), other file parts skipped. Any failure stops reading.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream, type BusboyInstance } from '@fastify/busboy';
import { HerdError, toHerdError } from '../core/errors.ts';

export interface MultipartHandlers<T> {
  /** The form field that carries the file. */
  fileField: string;
  /** Called per text field as it arrives; throwing refuses the upload before more is read. */
  onField?: (name: string, value: string) => void;
  /** Consumes the file part's stream; its result is the upload's. */
  storeFile: (stream: Readable) => Promise<T>;
  /** Undoes storeFile when the form fails after it (a field too long, a malformed tail). */
  discard: (stored: T) => Promise<void>;
}

export interface MultipartUpload<T> {
  fields: Map<string, string>;
  file: { filename: string; stored: T } | undefined;
}

/** Text fields are small (purpose, expires_after): their limits keep a hostile form from using memory. */
const LIMITS = { fields: 32, fieldSize: 64 * 1024, fieldNameSize: 200, files: 4, parts: 64, headerPairs: 100 };

export function readMultipartUpload<T>(body: Readable, headers: IncomingHttpHeaders, handlers: MultipartHandlers<T>): Promise<MultipartUpload<T>> {
  return new Promise((resolve, reject) => {
    const contentType = headers['content-type'] ?? '';
    let parser: BusboyInstance;
    try {
      parser = Busboy({ headers: { ...headers, 'content-type': contentType }, limits: LIMITS });
    } catch (err) {
      reject(new HerdError('INVALID_ARG', `malformed multipart/form-data request: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    const fields = new Map<string, string>();
    let fileTask: Promise<{ filename: string; stored: T }> | undefined;
    let current: BusboyFileStream | undefined;
    let failed = false;
    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      // The rest of the body is read and dropped, so the answer can be sent on a connection still usable.
      body.unpipe(parser);
      body.resume();
      current?.destroy();
      void fileTask?.then((f) => handlers.discard(f.stored)).catch(() => undefined);
      reject(toHerdError(err));
    };
    parser.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (failed) return;
      if (valueTruncated) return fail(new HerdError('INVALID_ARG', `form field '${name.slice(0, 64)}' is longer than ${LIMITS.fieldSize} bytes`, { param: name }));
      fields.set(name, value);
      try {
        handlers.onField?.(name, value);
      } catch (err) {
        fail(err);
      }
    });
    parser.on('file', (name, stream, filename) => {
      // A part cut short errors its stream too, possibly after the form failed: the form's own 'error' (or storeFile's
      // rejection) reports it, so this listener only keeps it from being unhandled.
      stream.on('error', () => undefined);
      if (failed || name !== handlers.fileField || fileTask !== undefined) {
        stream.resume();
        return;
      }
      current = stream;
      fileTask = handlers.storeFile(stream).then((stored) => ({ filename, stored }));
      fileTask.catch(fail);
    });
    parser.on('finish', () => {
      if (failed) return;
      (fileTask ?? Promise.resolve(undefined)).then((file) => {
        if (!failed) resolve({ fields, file });
      }, fail);
    });
    parser.on('error', (err: unknown) => fail(new HerdError('INVALID_ARG', `malformed multipart/form-data request: ${err instanceof Error ? err.message : String(err)}`)));
    // A client that goes away mid-upload is a refusal, not Herd's failure (no INTERNAL, no stack in the log).
    body.on('error', () => fail(new HerdError('INVALID_ARG', 'the upload ended before its multipart body was complete')));
    body.pipe(parser);
  });
}
