// holdStreamEnd: the end waits for the commit, and so does a piece that is itself the stream's last event.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { holdStreamEnd } from '../../../src/gateway/flow/hold-stream-end.ts';

async function* source(items: string[]): AsyncGenerator<string> {
  for (const item of items) yield item;
}

describe('holdStreamEnd', () => {
  it('hands a last piece on only after the source ended and the commit settled, and commits once', async () => {
    let commits = 0;
    let release!: () => void;
    const committed = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = holdStreamEnd(
      source(['a', 'stop']),
      () => {
        commits++;
        return committed;
      },
      (piece) => piece === 'stop',
    )[Symbol.asyncIterator]();
    assert.deepEqual(await held.next(), { done: false, value: 'a' });
    let got: IteratorResult<string> | undefined;
    const pending = held.next().then((step) => {
      got = step;
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(got, undefined, 'the last piece waits for the commit');
    release();
    await pending;
    assert.deepEqual(got, { done: false, value: 'stop' });
    assert.equal((await held.next()).done, true);
    assert.equal(commits, 1);
  });

  it('a piece taken for the last that is not hands on what follows it, and the end still waits once', async () => {
    let commits = 0;
    const held = holdStreamEnd(
      source(['stop', 'b']),
      async () => {
        commits++;
      },
      (piece) => piece === 'stop',
    );
    const seen: string[] = [];
    for await (const piece of held) seen.push(piece);
    assert.deepEqual(seen, ['stop', 'b']);
    assert.equal(commits, 1);
  });
});
