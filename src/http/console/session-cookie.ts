// The console's session cookie: `herd_session=<id>; HttpOnly; SameSite=Strict; Path=<base>/; Max-Age=<ttl>`
// (Secure when the request came over TLS), read back from a Cookie header without a parser dependency.
import type { IncomingHttpHeaders } from 'node:http';

export const SESSION_COOKIE = 'herd_session';
export const CSRF_HEADER = 'x-csrf-token';
/** 256 random bits in base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

/** The session id a Cookie header carries (the first well-formed herd_session: the most specific Path comes first), else undefined. */
export function readSessionCookie(header: string | undefined): string | undefined {
  if (header === undefined || !header.includes(`${SESSION_COOKIE}=`)) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (SESSION_ID.test(value)) return value;
  }
  return undefined;
}

/** True when a request sends no key of its own and a session cookie: only then does the cookie count. */
export function usesSessionCookie(headers: IncomingHttpHeaders): boolean {
  return headers.authorization === undefined && headers['x-api-key'] === undefined && headers.cookie?.includes(`${SESSION_COOKIE}=`) === true;
}

export interface CookieScope {
  /** `<base>` ('' or `/a/b`): the cookie's Path is `<base>/`. */
  basePath: string;
  secure: boolean;
}

export function formatSessionCookie(id: string, maxAgeSecs: number, scope: CookieScope): string {
  return `${SESSION_COOKIE}=${id}; Path=${scope.basePath}/; Max-Age=${maxAgeSecs}; HttpOnly; SameSite=Strict${scope.secure ? '; Secure' : ''}`;
}

export function formatClearedCookie(scope: CookieScope): string {
  return formatSessionCookie('', 0, scope);
}

/** POST, PUT, PATCH, DELETE: the methods that need the CSRF header when the cookie authenticates. */
export function isMutatingMethod(method: string | undefined): boolean {
  return method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE';
}
