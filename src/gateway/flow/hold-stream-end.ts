// Holds a stream's end until a promise settles: the consumer sees `done` (and so writes its final bytes)
// only after the request's ledger rows have committed. A piece that is itself the stream's last event (an
// upstream's own message_stop or response.completed, passed through) is held with the end. Other pieces
// pass through untouched.

/**
 * `beforeEnd` must not reject; it runs once, when the source is exhausted (not when the consumer stops
 * early). `isLast`: a piece that ends the stream as its client reads it; it is handed on only once the
 * source is exhausted and `beforeEnd` has settled (should more follow it after all, they follow it).
 */
export function holdStreamEnd<T>(source: AsyncIterable<T>, beforeEnd: () => Promise<void>, isLast?: (piece: T) => boolean): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const inner = source[Symbol.asyncIterator]();
      // A step read ahead of a last piece, handed on at the next call; `ended` once beforeEnd has run.
      let ahead: IteratorResult<T> | undefined;
      let ended = false;
      return {
        async next(): Promise<IteratorResult<T>> {
          if (ended) return { done: true, value: undefined };
          const step = ahead ?? (await inner.next());
          ahead = undefined;
          if (step.done) {
            ended = true;
            await beforeEnd();
            return step;
          }
          if (isLast?.(step.value) === true) {
            // The source ends right after its last piece: read that end now, so the rows commit before the piece leaves.
            const after = await inner.next();
            if (after.done) {
              ended = true;
              await beforeEnd();
            } else ahead = after;
          }
          return step;
        },
        return(value?: unknown): Promise<IteratorResult<T>> {
          return inner.return ? inner.return(value) : Promise.resolve({ done: true, value: undefined });
        },
        throw(error?: unknown): Promise<IteratorResult<T>> {
          return inner.throw ? inner.throw(error) : Promise.reject(error);
        },
      };
    },
  };
}
