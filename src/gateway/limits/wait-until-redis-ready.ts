// Waiting for a Redis connection at start-up, bounded: the limits, the cache tier and the affinity store
// each give Redis a moment to connect and carry on without it (false) rather than delay the start.
import type { Redis } from 'ioredis';

export function waitUntilRedisReady(client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), timeoutMs);
    client.on('ready', onReady);
  });
}
