// A stored line's request read back from its batch's input file by byte range (the store never copies bodies):
// OpenAI's line `{custom_id, method, url, body}` gives `body`, an Anthropic requests item `{custom_id, params}` gives `params`.
import { HerdError } from '../../core/errors.ts';
import { isJsonObject, type JsonObject } from '../protocol/check-json-value.ts';
import type { BatchDialect, BatchLine } from './batch-store.ts';
import type { FileStore } from './file-store.ts';

export async function readLineRecord(files: FileStore, storageRef: string, line: Pick<BatchLine, 'bodyOffset' | 'bodyLength'>): Promise<JsonObject> {
  const stream = await files.open(storageRef, { start: line.bodyOffset, end: line.bodyOffset + line.bodyLength - 1 });
  const pieces: Buffer[] = [];
  for await (const piece of stream) pieces.push(typeof piece === 'string' ? Buffer.from(piece) : (piece as Buffer));
  const record: unknown = JSON.parse(Buffer.concat(pieces).toString('utf8'));
  if (!isJsonObject(record)) throw new HerdError('INTERNAL', 'a stored batch line is not a JSON object');
  return record;
}

export async function readLineBody(files: FileStore, storageRef: string, line: Pick<BatchLine, 'bodyOffset' | 'bodyLength'>, dialect: BatchDialect): Promise<JsonObject> {
  const record = await readLineRecord(files, storageRef, line);
  const body = dialect === 'openai' ? record['body'] : record['params'];
  if (!isJsonObject(body)) throw new HerdError('INTERNAL', 'a stored batch line has no request body');
  return body;
}
