// Holds a stream's end until a promise settles: the consumer sees `done` (and so writes its final bytes)
// only after the request's ledger rows have committed. Chunks pass through untouched.

/** `beforeEnd` must not reject; it runs once, when the source is exhausted (not when the consumer stops early). */
export function holdStreamEnd<T>(source: AsyncIterable<T>, beforeEnd: () => Promise<void>): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      const inner = source[Symbol.asyncIterator]();
      return {
        async next(): Promise<IteratorResult<T>> {
          const step = await inner.next();
          if (step.done) await beforeEnd();
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
