// Issue 4: "No key in any log line or error message". Drives every error path that sees a key and
// checks that no message carries a key, its hash, the master key, or any 8-character run of one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HerdError } from '../../../src/core/errors.ts';
import { Authenticator } from '../../../src/gateway/keys/authenticator.ts';
import { createKeySecret, hashKeySecret, KEY_PREFIX } from '../../../src/gateway/keys/create-key-secret.ts';
import type { ChangeContext } from '../../../src/gateway/keys/key-store.ts';
import { openKeyStore } from '../../../src/gateway/keys/open-key-store.ts';

const MASTER = 'Zq8-master-key-that-must-never-leak-4711';
const ctx: ChangeContext = { actor: { id: 'cli@test', name: 'tester', role: 'admin' } };

/** Secret material of `secret` that must not appear: itself, its hash, and every 8-char window of its
 *  random part (after the public id, which is safe to show; a masked form shows at most 4 random characters at each end). */
export function leakedFragments(secret: string, message: string): string[] {
  const body = secret.startsWith(KEY_PREFIX) ? secret.slice(KEY_PREFIX.length).replace(/^(hk|key)_[0-9A-Za-z]+-/, '') : secret;
  const windows = Array.from({ length: Math.max(0, body.length - 7) }, (_, i) => body.slice(i, i + 8));
  return [secret, hashKeySecret(secret), ...windows].filter((f) => message.includes(f));
}

test('no error message carries a key, its hash or a fragment of either', async () => {
  const store = await openKeyStore(join(mkdtempSync(join(tmpdir(), 'herd-leak-')), 'herd.db'));
  const messages: string[] = [];
  const collect = (result: unknown) => {
    if (result instanceof HerdError) messages.push(result.message, String(result.stack));
  };
  try {
    const live = await store.createKey({ name: 'live', allowedModels: ['only-this'] }, ctx);
    const dead = await store.createKey({ name: 'dead', allowedModels: '*' }, ctx);
    await store.revokeKey(dead.key.id, ctx);
    const neverIssued = createKeySecret().secret;
    const almost = live.secret.slice(0, -1) + (live.secret.endsWith('a') ? 'b' : 'a');
    const auth = new Authenticator({ store, masterKey: MASTER });

    for (const token of [dead.secret, neverIssued, almost, `${MASTER}!`, MASTER.slice(1), `${live.secret} ${MASTER}`]) {
      collect(auth.authenticate(`Bearer ${token}`));
    }
    const key = auth.authenticate(`Bearer ${live.secret}`);
    assert.ok(!(key instanceof HerdError));
    collect(auth.authorizeModel(key.key, 'other-model'));
    for (const ref of [neverIssued, almost, `${live.key.prefix}zz`]) {
      await store.revokeKey(ref, ctx).catch(collect);
      await store.findKey(ref).catch(collect);
    }
    await store.createKey({ name: '', allowedModels: [live.secret] }, ctx).catch(collect);
    await store.createKey({ name: 'x', allowedModels: [`${live.secret},x`] }, ctx).catch(collect);
    await store.createKey({ name: live.secret }, ctx).catch(collect);
    await store.createKey({ name: 'y', tags: [`${live.secret}\u0000`] }, ctx).catch(collect);
    await store.close();
    collect(auth.authenticate(`Bearer ${live.secret}`));

    assert.ok(messages.length >= 22, `only ${messages.length} messages collected`);
    for (const message of messages) {
      for (const secret of [live.secret, dead.secret, neverIssued, almost, MASTER]) {
        assert.deepEqual(leakedFragments(secret, message), [], `leak in: ${message}`);
      }
    }
  } finally {
    await store.close();
  }
});
