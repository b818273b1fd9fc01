// What an operator reads when a PostgreSQL store (the ledger, the key store) cannot reach its database: where it points (never the
// password) and why it failed, with a hint when the cause will not go away without them (a wrong password).
import pg from 'pg';
import { HerdError } from '../../core/errors.ts';
import { SchemaNewerError } from './apply-postgres-migrations.ts';

/** SQLSTATEs meaning the server answered and said no: retrying alone will not help. */
const NEEDS_OPERATOR: Readonly<Record<string, string>> = {
  '28P01': 'the password was refused',
  '28000': 'the server refused this user or client address (pg_hba.conf)',
  '3D000': 'the database does not exist',
  '42501': 'the user lacks a privilege the ledger needs (CREATE on the schema, or on the database)',
};

/**
 * postgres://user@host:port/db as pg reads the URL (socket paths and defaults included), password and
 * options left out; a URL pg cannot read is a config error, not an outage.
 */
export function describePostgresUrl(url: string, param = 'billing.ledger'): string {
  let target: pg.Client;
  try {
    // The constructor only parses: nothing connects.
    target = new pg.Client({ connectionString: url });
  } catch {
    // The text is not echoed: it may hold a password.
    throw new HerdError('INVALID_ARG', `${param} is not a valid postgres:// URL (postgres://user:password@host:port/database)`, { param });
  }
  const user = target.user ? `${target.user}@` : '';
  const host = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `postgres://${user}${host}:${target.port}/${target.database ?? ''}`;
}

/** One line: why the last attempt failed, plus whether it needs someone to act. */
export function describePostgresFailure(error: unknown): { reason: string; needsOperator: boolean } {
  const root = rootOf(error);
  const code = typeof (root as { code?: unknown }).code === 'string' ? (root as { code: string }).code : undefined;
  const message = root instanceof Error ? root.message : String(root);
  const hint = code === undefined ? undefined : NEEDS_OPERATOR[code];
  if (hint !== undefined) return { reason: `${hint}: ${message}`, needsOperator: true };
  // A newer schema (another Herd migrated it) is ours to report, and waits for an upgrade of this one.
  if (error instanceof SchemaNewerError) return { reason: error.message, needsOperator: true };
  return { reason: message, needsOperator: false };
}

function rootOf(error: unknown): unknown {
  let current = error;
  for (let i = 0; i < 5 && current instanceof HerdError && current.cause !== undefined; i++) current = current.cause;
  return current;
}
