// Who may do what on the admin API and the CLI: admin everything; viewer reads (never secrets); a team
// manager its own team's keys (and creates only client keys there); a client nothing but /v1/me.
import { HerdError } from '../../core/errors.ts';
import type { Actor, KeyInfo, KeyRole, StoredKey } from '../keys/key-store.ts';

/** What an operation needs of its actor. */
export type AdminAccess = 'read' | 'write' | 'keys.read' | 'keys.write';

/** The audit actor a key (or the master key) acts as. */
export function actorOfKey(key: KeyInfo): Actor {
  return { id: key.id, name: key.name, role: key.role, teamId: key.team?.id };
}

/** The actor of `herd keys|teams|audit`: the person at this terminal, with the store's file open, is admin. */
export function cliActor(hostname: string): Actor {
  return { id: `cli@${hostname}`, name: `cli@${hostname}`, role: 'admin' };
}

/**
 * Refuses an actor whose role does not reach `access`: `read`/`write` are the whole admin API (teams,
 * usage, audit, catalog); `keys.*` are key operations, which a manager reaches for its own team
 * (checked per key by requireKeyInScope).
 */
export function requireAccess(actor: Actor, access: AdminAccess, what: string): void {
  const role = actor.role;
  if (role === 'admin') return;
  if (role === 'viewer' && (access === 'read' || access === 'keys.read')) return;
  if (role === 'manager' && (access === 'keys.read' || access === 'keys.write')) {
    if (actor.teamId === undefined) throw denied(actor, what, 'a manager key acts on its own team, and this one belongs to no team: give it a team');
    return;
  }
  throw denied(actor, what, describeRole(role));
}

/** A manager may act only on keys of its team, and (writing) only on client keys: it can never raise anyone's rights. */
export function requireKeyInScope(actor: Actor, key: StoredKey, write: boolean): void {
  if (actor.role !== 'manager') return;
  if (key.team?.id !== actor.teamId) {
    throw denied(actor, `key '${key.name}' (${key.id})`, "a manager key reaches only its own team's keys");
  }
  if (write && key.role !== 'client' && key.id !== actor.id) {
    throw denied(actor, `changing key '${key.name}' (${key.id}), a ${key.role} key`, 'a manager key changes only client keys of its team');
  }
}

/** What a manager may set on a key it creates or updates: role client, its own team. */
export function requireManagerKeyFields(actor: Actor, fields: { team?: string | null | undefined; role?: KeyRole | null | undefined }, teamIds: { id: string; name: string }): void {
  if (actor.role !== 'manager') return;
  if (fields.role !== undefined && fields.role !== null && fields.role !== 'client') {
    throw denied(actor, `giving a key the role '${fields.role}'`, 'a manager key creates and changes only client keys');
  }
  if (fields.team !== undefined && fields.team !== teamIds.id && fields.team !== teamIds.name) {
    throw denied(actor, `putting a key in team '${fields.team ?? '(none)'}'`, `a manager key keeps keys in its own team (${teamIds.name})`);
  }
}

function describeRole(role: KeyRole): string {
  if (role === 'viewer') return 'a viewer key only reads the admin API';
  if (role === 'manager') return "a manager key reaches only its own team's keys";
  return 'a client key calls models and reads GET /v1/me, not the admin API: use an admin key or the master key';
}

function denied(actor: Actor, what: string, why: string): HerdError {
  return new HerdError('PERMISSION_DENIED', `The key '${actor.name}' (role ${actor.role}) may not do this: ${what}. ${capitalize(why)}.`, { reason: 'admin_only' });
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
