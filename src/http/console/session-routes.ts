// POST/GET/DELETE /ui/api/session: sign in with an admin or viewer key (a session cookie and its CSRF token),
// read the session, sign out. Failed sign-ins are throttled per client address and every sign-in, failed
// sign-in and sign-out is audited; the key itself is never logged, audited or stored (only its hash).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HerdError, toHerdError } from '../../core/errors.ts';
import { actorOfKey } from '../../gateway/admin/admin-roles.ts';
import { AuthFailureLimiter } from '../../gateway/keys/auth-failure-limiter.ts';
import { type ConsoleSession, csrfTokenOf } from '../../gateway/keys/console-sessions.ts';
import { hashKeySecret } from '../../gateway/keys/create-key-secret.ts';
import type { ChangeContext, KeyInfo } from '../../gateway/keys/key-store.ts';
import { sendAdminError } from '../admin-usage-route.ts';
import { parseJsonBody } from '../parse-json-body.ts';
import { clientAddressOf } from '../resolve-client-address.ts';
import type { ConsoleOptions, ServerInfoJson } from './console-options.ts';
import type { RequestOrigin } from './request-origin.ts';
import { refuseRole } from './session-auth.ts';
import { formatClearedCookie, formatSessionCookie, readSessionCookie } from './session-cookie.ts';

export const SESSION_PATH = '/ui/api/session';
/** A key longer than this is no key Herd made (and is not worth hashing). */
const MAX_KEY_LENGTH = 1024;

export interface SessionJson {
  actor: { id: string; name: string; role: string; team_id?: string };
  csrf_token: string;
  expires_at: number;
  server: ServerInfoJson;
}

type SessionRouteOptions = ConsoleOptions & { origin: RequestOrigin };

export function registerSessionRoutes(scope: FastifyInstance, options: SessionRouteOptions): void {
  const failures = new AuthFailureLimiter({ maxFailures: options.ui.sign_in_failures.max, windowMs: options.ui.sign_in_failures.window_secs * 1000 }, options.now);
  scope.setErrorHandler((error: Error & { statusCode?: number }, _request, reply) => {
    const herd =
      error instanceof HerdError ? error : typeof error.statusCode === 'number' && error.statusCode < 500 ? new HerdError('INVALID_ARG', error.message) : toHerdError(error);
    sendAdminError(reply, herd);
  });
  scope.post(SESSION_PATH, async (req, reply) => signIn(req, reply, options, failures));
  scope.get(SESSION_PATH, async (req, reply) => {
    const auth = requireAuth(options);
    const caller = await auth.authenticate(req.raw, false);
    if (caller === undefined || caller instanceof HerdError) return refuse(reply, caller, req, options);
    return reply
      .code(200)
      .header('cache-control', 'no-store')
      .send(sessionJson(caller.key, caller.session, csrfTokenOf(caller.id), options));
  });
  scope.delete(SESSION_PATH, async (req, reply) => {
    const auth = requireAuth(options);
    const caller = await auth.authenticate(req.raw, true);
    if (caller === undefined || caller instanceof HerdError) return refuse(reply, caller, req, options);
    await auth.sessions.revoke(caller.id);
    options.audit?.record({ action: 'console.sign_out', object: 'console', after: { session: caller.session.handle.slice(0, 16) } }, contextOf(req, actorOfKey(caller.key)));
    return reply
      .code(204)
      .header('set-cookie', formatClearedCookie(scopeOf(req, options)))
      .send();
  });
}

async function signIn(req: FastifyRequest, reply: FastifyReply, options: SessionRouteOptions, failures: AuthFailureLimiter): Promise<FastifyReply> {
  const auth = requireAuth(options);
  const client = clientAddressOf(req.raw);
  // Refused before the key is looked at: an address guessing keys learns nothing more, not even a right guess.
  const wait = failures.refusal(client.address);
  if (wait !== undefined) {
    fail(options, req, undefined, 'throttled');
    throw new HerdError('RATE_LIMITED', `Too many failed console sign-ins from this address. Try again in ${wait} s.`, { retryAfterSeconds: wait });
  }
  const secret = readKeyField(req.body);
  const result = auth.authenticator.authenticate(`Bearer ${secret}`, client);
  const refusal = result instanceof HerdError ? result : refuseRole(result.key);
  if (refusal !== undefined) {
    if (refusal.code !== 'UNAVAILABLE' && refusal.code !== 'INTERNAL' && refusal.code !== 'RATE_LIMITED') failures.recordFailure(client.address);
    fail(options, req, result instanceof HerdError ? undefined : result.key, refusal.reason ?? refusal.code);
    throw refusal;
  }
  const key = (result as { key: KeyInfo }).key;
  const created = await auth.sessions.create({ keyId: key.id, role: key.role, secretHash: hashKeySecret(secret), ttlMs: options.ui.session_ttl_secs * 1000 });
  options.audit?.record({ action: 'console.sign_in', object: 'console', after: { session: created.session.handle.slice(0, 16) } }, contextOf(req, actorOfKey(key)));
  return reply
    .code(200)
    .header('cache-control', 'no-store')
    .header('set-cookie', formatSessionCookie(created.id, options.ui.session_ttl_secs, scopeOf(req, options)))
    .send(sessionJson(key, created.session, created.csrfToken, options));
}

/** `{"key": "<secret>"}`; anything else is a 400 naming the field (never echoing a value). */
function readKeyField(body: unknown): string {
  const parsed = Buffer.isBuffer(body) ? (body.length === 0 ? undefined : parseJsonBody(body)) : body;
  const key = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>).key : undefined;
  if (typeof key !== 'string' || key.trim() === '' || key.length > MAX_KEY_LENGTH) {
    throw new HerdError('INVALID_ARG', 'Sign in with a JSON body {"key": "<an admin or viewer key>"}.', { param: 'key' });
  }
  return key.trim();
}

function requireAuth(options: SessionRouteOptions) {
  if (options.auth === undefined) {
    throw new HerdError('UNAVAILABLE', "The console signs in with the gateway's keys, and this Herd runs no gateway: configure models (and auth) in herd.yaml.");
  }
  return options.auth;
}

/** No live session: 401 (and the stale cookie cleared); a refusal as it is. */
function refuse(reply: FastifyReply, error: HerdError | undefined, req: FastifyRequest, options: SessionRouteOptions): FastifyReply {
  const herd = error ?? new HerdError('UNAUTHENTICATED', 'Not signed in to the console: POST ui/api/session with {"key": "<an admin or viewer key>"}.');
  if (herd.code === 'UNAUTHENTICATED' && readSessionCookie(req.headers.cookie) !== undefined) reply.header('set-cookie', formatClearedCookie(scopeOf(req, options)));
  sendAdminError(reply, herd);
  return reply;
}

function fail(options: SessionRouteOptions, req: FastifyRequest, key: KeyInfo | undefined, why: string): void {
  const actor = key ? actorOfKey(key) : { id: 'anonymous', name: 'anonymous', role: 'client' as const };
  options.audit?.record({ action: 'console.sign_in_failed', object: 'console', after: { why } }, contextOf(req, actor));
}

function contextOf(req: FastifyRequest, actor: ChangeContext['actor']): ChangeContext {
  const header = req.headers['x-request-id'];
  return { actor, requestId: typeof header === 'string' && header.length <= 200 ? header : req.id, sourceIp: clientAddressOf(req.raw).address };
}

function scopeOf(req: FastifyRequest, options: SessionRouteOptions) {
  return { basePath: options.origin.basePath(req.raw), secure: options.origin.isSecure(req.raw) };
}

function sessionJson(key: KeyInfo, session: ConsoleSession, csrfToken: string, options: SessionRouteOptions): SessionJson {
  const actor = { id: key.id, name: key.name, role: key.role, ...(key.team ? { team_id: key.team.id } : {}) };
  return { actor, csrf_token: csrfToken, expires_at: session.expiresAt, server: options.server() };
}
