// `-u` / `url` as users write it ("localhost:8000", "http://10.0.0.5:8000") to an origin undici can use.
import { invalidArg } from '../core/errors.ts';

/** "host:port" (as perf_analyzer and tritonclient take it) or an http(s) URL without a path, to its origin. */
export function parseServerUrl(value: string): string {
  const text = value.trim();
  if (text === '') throw invalidArg('server URL is empty: expected host:port or http://host:port');
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw invalidArg(`invalid server URL '${value}': expected host:port or http://host:port`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidArg(`invalid server URL '${value}': only http and https are supported (gRPC is not available in this client)`);
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
    throw invalidArg(`invalid server URL '${value}': KServe paths start at /v2, so give only scheme, host and port`);
  }
  return url.origin;
}
