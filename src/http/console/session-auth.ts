// A request authenticated by the console's session cookie: the session must be live, the key it signed in with
// must still authenticate (revoked, blocked, expired, rotated past grace all end it), its role must be one that
// may use the console, and a mutating call (or any model call) must carry the session's CSRF token.
import type { IncomingMessage } from 'node:http';
import { HerdError, toHerdError } from '../../core/errors.ts';
import type { AuthResult, Authenticator } from '../../gateway/keys/authenticator.ts';
import type { ConsoleSession, ConsoleSessionStore } from '../../gateway/keys/console-sessions.ts';
import type { KeyInfo, KeyRole } from '../../gateway/keys/key-store.ts';
import { clientAddressOf } from '../resolve-client-address.ts';
import { CSRF_HEADER, readSessionCookie } from './session-cookie.ts';

/** Roles that may sign in to the console. */
export const CONSOLE_ROLES: readonly KeyRole[] = ['admin', 'viewer'];

export interface SessionCaller {
  key: KeyInfo;
  session: ConsoleSession;
  /** The cookie's value (the CSRF token is derived from it). */
  id: string;
}

export const SESSION_ENDED_MESSAGE = 'Your console session has expired or was signed out. Sign in again.';
const CSRF_MESSAGE = `This call uses the console's session cookie and needs its CSRF token in the ${CSRF_HEADER} header (the csrf_token of GET ui/api/session).`;

/** The session each authenticated request ran as (the live tail closes with it). */
const sessionsByRequest = new WeakMap<IncomingMessage, ConsoleSession>();

/** The console session `req` was authenticated by, if it was (for the live tail: its handle and expiry). */
export function sessionOfRequest(req: IncomingMessage): ConsoleSession | undefined {
  return sessionsByRequest.get(req);
}

export class ConsoleSessionAuth {
  constructor(
    readonly sessions: ConsoleSessionStore,
    readonly authenticator: Pick<Authenticator, 'authenticate' | 'authenticateSecretHash'>,
  ) {}

  /**
   * Undefined when `req` carries no session cookie; else the caller or why not (401: no live session or
   * key; 403: role, CSRF). `csrf`: whether this call needs the x-csrf-token header.
   */
  async authenticate(req: IncomingMessage, csrf: boolean): Promise<SessionCaller | HerdError | undefined> {
    const id = readSessionCookie(req.headers.cookie);
    if (id === undefined) return undefined;
    let session: ConsoleSession | undefined;
    try {
      session = await this.sessions.find(id);
    } catch (err) {
      return toHerdError(err);
    }
    if (session === undefined) return new HerdError('UNAUTHENTICATED', SESSION_ENDED_MESSAGE);
    const result = this.authenticator.authenticateSecretHash(session.secretHash, clientAddressOf(req));
    if (result instanceof HerdError) return result;
    if (result.key.id !== session.keyId) return new HerdError('UNAUTHENTICATED', SESSION_ENDED_MESSAGE);
    const refusal = refuseRole(result.key);
    if (refusal) return refusal;
    if (csrf) {
      const header = req.headers[CSRF_HEADER];
      if (!this.sessions.checkCsrf(session, typeof header === 'string' ? header : undefined)) {
        return new HerdError('PERMISSION_DENIED', CSRF_MESSAGE, { reason: 'csrf_failed' });
      }
    }
    sessionsByRequest.set(req, session);
    return { key: result.key, session, id };
  }

  /**
   * The gateway's /v1 calls from the playground: a session of an admin key, CSRF token always (a GET too).
   * Undefined when the request has no session cookie (the caller then authenticates as usual).
   */
  async authenticateModelCall(req: IncomingMessage): Promise<AuthResult | undefined> {
    const caller = await this.authenticate(req, true);
    if (caller === undefined || caller instanceof HerdError) return caller;
    if (caller.key.role !== 'admin') {
      return new HerdError('PERMISSION_DENIED', `The console session of '${caller.key.name}' (role ${caller.key.role}) may not call models: the playground needs an admin key.`, {
        reason: 'admin_only',
      });
    }
    return { key: caller.key };
  }
}

/** A key whose role changed to one that may not use the console since it signed in. */
export function refuseRole(key: KeyInfo): HerdError | undefined {
  if (CONSOLE_ROLES.includes(key.role)) return undefined;
  return new HerdError('PERMISSION_DENIED', `The key '${key.name}' (role ${key.role}) cannot sign in to the console: use an admin or viewer key.`, { reason: 'admin_only' });
}
