// Resolving what a person types to one key (id, secret, `team/name`, name, display prefix): the strongest kind of
// match wins, a live key beats a revoked one, and two live candidates are an error listing their ids.
import { HerdError } from '../../core/errors.ts';
import type { SqlRunner } from '../storage/sql-driver.ts';
import { hashKeySecret, looksLikeKeySecret } from './create-key-secret.ts';
import type { StoredKey } from './key-store.ts';
import { convertKeyRow, KEY_SELECT, type KeyRow } from './key-rows.ts';
import { quoteUntrusted } from './mask-key.ts';

type MatchKind = 'id' | 'secret' | 'team/name' | 'name' | 'prefix';
const STRENGTH: readonly MatchKind[] = ['id', 'secret', 'team/name', 'name', 'prefix'];

export async function findKeyByRef(db: SqlRunner, rawRef: string): Promise<StoredKey> {
  const ref = rawRef.trim();
  if (ref === '') throw new HerdError('INVALID_ARG', 'give a key by its id (hk_…), name, team/name or display prefix', { param: 'key' });
  const secretHash = looksLikeKeySecret(ref) ? hashKeySecret(ref) : '';
  const slash = ref.indexOf('/');
  const teamName = slash > 0 ? ref.slice(0, slash) : '';
  const keyName = slash > 0 ? ref.slice(slash + 1) : '';
  const rows = await db.query<KeyRow & { secret_match: number | string }>(
    `${KEY_SELECT.replace('SELECT ', 'SELECT CASE WHEN s.hash IS NULL THEN 0 ELSE 1 END AS secret_match, ')}
     LEFT JOIN key_secrets s ON s.key_id = k.id AND s.hash = ?
     WHERE k.id = ? OR k.name = ? OR k.prefix = ? OR s.hash IS NOT NULL OR (t.name = ? AND k.name = ?)
     ORDER BY k.created_at DESC, k.id DESC LIMIT 50`,
    [secretHash, ref, ref, ref, teamName, keyName],
  );
  const kindOf = (row: KeyRow & { secret_match: number | string }): MatchKind => {
    if (row.id === ref) return 'id';
    if (Number(row.secret_match) === 1) return 'secret';
    if (slash > 0 && row.team_name === teamName && row.name === keyName) return 'team/name';
    return row.name === ref ? 'name' : 'prefix';
  };
  const shown = quoteUntrusted(ref);
  for (const kind of STRENGTH) {
    const matches = rows.filter((r) => kindOf(r) === kind);
    if (matches.length === 0) continue;
    const live = matches.filter((r) => r.revoked_at === null);
    if (live.length > 1) {
      const ids = live.map((r) => (r.team_name ? `${r.id} (team ${r.team_name})` : r.id)).join(', ');
      throw new HerdError('INVALID_ARG', `${shown} matches ${live.length} keys by ${kind}: ${ids}; give the id${kind === 'name' ? ' or team/name' : ''}`, { param: 'key' });
    }
    return convertKeyRow((live[0] ?? matches[0]) as KeyRow);
  }
  throw new HerdError('NOT_FOUND', `no key has the id, name or prefix ${shown} (see herd keys list)`, { param: 'key' });
}
