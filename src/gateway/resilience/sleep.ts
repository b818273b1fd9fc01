// The router's wait between retries: cancelled by the client's signal (rejecting with its reason, as
// providers do), and injectable so tests run retries without real time passing.
import type { AbortLink } from '../../core/abort-link.ts';

export type Sleep = (ms: number, signal: AbortLink) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
