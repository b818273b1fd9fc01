// readBatchJsonl: a JSONL download cut anywhere (inside a line, inside a character) reads as its lines;
// a line that is not JSON is the upstream's `malformed`, naming the line.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { UpstreamError } from '../../../src/gateway/protocol/upstream-error.ts';
import { HttpUpstream } from '../../../src/gateway/providers/http-upstream.ts';
import { readBatchJsonl } from '../../../src/gateway/providers/read-batch-jsonl.ts';

const upstream = new HttpUpstream({ provider: 'test', baseUrl: 'http://127.0.0.1:9', headers: {}, parseErrorBody: () => ({}), timeoutMs: 1000 });

async function* pieces(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function read(text: string, size: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const line of readBatchJsonl(pieces(Buffer.from(text), size), upstream, 'results')) out.push(line);
  return out;
}

describe('readBatchJsonl', () => {
  after(() => upstream.close());

  it('reads lines cut at any byte, CRLF or LF, blank lines skipped, the last line without a newline', async () => {
    const text = '{"a":"é→1"}\r\n\n{"b":2}\n{"c":"末"}';
    for (const size of [1, 2, 3, 5, 64]) assert.deepEqual(await read(text, size), [{ a: 'é→1' }, { b: 2 }, { c: '末' }], `pieces of ${size}`);
  });

  it('a line that is not JSON is malformed, with its number', async () => {
    await assert.rejects(read('{"a":1}\n{"b":\n', 4), (err: unknown) => err instanceof UpstreamError && err.failure === 'malformed' && /results line 2/.test(err.message));
  });
});
