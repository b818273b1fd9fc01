// Console sessions in the key store's database, on SQLite and PostgreSQL: a session made on one replica is seen
// by another (which may trust its cached read for SESSION_CACHE_MS), sign-out and expiry end it, the CSRF
// token is checked by hash, and the key behind it is re-checked on every use (rotation grace, block, master).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Authenticator } from '../../../src/gateway/keys/authenticator.ts';
import { ConsoleSessionStore, csrfTokenOf } from '../../../src/gateway/keys/console-sessions.ts';
import { hashKeySecret } from '../../../src/gateway/keys/create-key-secret.ts';
import { openKeyStore } from '../../../src/gateway/keys/open-key-store.ts';
import { ctx, testBothEngines } from './key-store-harness.ts';

const HOUR = 3_600_000;

testBothEngines('a session made on one replica is seen by another; sign-out and expiry end it', async (h) => {
  let now = Date.now();
  const a = await openKeyStore(h.location, { schema: h.schema });
  const b = await openKeyStore(h.location, { schema: h.schema });
  try {
    const sessionsA = new ConsoleSessionStore(a.driver, { now: () => now });
    const sessionsB = new ConsoleSessionStore(b.driver, { now: () => now, cacheMs: 0 });
    const cachedB = new ConsoleSessionStore(b.driver, { now: () => now });
    const created = await sessionsA.create({ keyId: 'hk_1', role: 'admin', secretHash: hashKeySecret('s'), ttlMs: HOUR });
    assert.match(created.id, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(created.csrfToken, csrfTokenOf(created.id));
    const seen = await sessionsB.find(created.id);
    assert.equal(seen?.keyId, 'hk_1');
    assert.equal(seen?.handle, created.session.handle);
    assert.ok(await cachedB.find(created.id));
    const rows = await h.sql('SELECT id_hash FROM console_sessions');
    assert.equal(JSON.stringify(rows).includes(created.id), false, 'only the hash of the id is stored');

    assert.equal(sessionsB.checkCsrf(seen as NonNullable<typeof seen>, created.csrfToken), true);
    assert.equal(sessionsB.checkCsrf(seen as NonNullable<typeof seen>, 'x'), false);
    assert.equal(sessionsB.checkCsrf(seen as NonNullable<typeof seen>, undefined), false);

    const ended: string[] = [];
    sessionsA.onEnd((s) => ended.push(s.handle));
    await sessionsA.revoke(created.id);
    assert.deepEqual(ended, [created.session.handle]);
    assert.equal(await sessionsA.find(created.id), undefined, 'at once on the replica that signed out');
    assert.equal(await sessionsB.find(created.id), undefined, 'on another replica once its cached read is older than the cache time');
    assert.ok(await cachedB.find(created.id), 'within the cache time another replica may still trust its read');
    now += 5_001;
    assert.equal(await cachedB.find(created.id), undefined);

    const short = await sessionsA.create({ keyId: 'hk_1', role: 'viewer', secretHash: hashKeySecret('s'), ttlMs: 1000 });
    assert.ok(await sessionsB.find(short.id));
    now += 1000;
    assert.equal(await sessionsB.find(short.id), undefined, 'expired');
  } finally {
    await a.close();
    await b.close();
  }
});

test('a session lives while its secret authenticates: rotation grace, block, revoke, the master key', async () => {
  const { mkdtempSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  let now = Date.now();
  const store = await openKeyStore(`sqlite:${join(mkdtempSync(join(tmpdir(), 'herd-sessions-')), 'keys.db')}`, { now: () => now });
  try {
    const auth = new Authenticator({ store, masterKey: 'sk-master-for-sessions-test', now: () => now });
    const created = await store.createKey({ name: 'ops', role: 'admin' }, ctx);
    const hash = hashKeySecret(created.secret);
    assert.equal(auth.authenticateSecretHash(hashKeySecret('sk-master-for-sessions-test')) instanceof Error, false);
    const ok = auth.authenticateSecretHash(hash);
    assert.ok(!(ok instanceof Error) && ok.key.id === created.key.id);
    await store.rotateKey('ops', { graceMs: HOUR }, ctx);
    assert.ok(!(auth.authenticateSecretHash(hash) instanceof Error), 'inside the rotation grace');
    now += HOUR + 1;
    const rotated = auth.authenticateSecretHash(hash);
    assert.ok(rotated instanceof Error && rotated.reason === 'key_rotated');
    const second = await store.createKey({ name: 'ops2', role: 'viewer' }, ctx);
    await store.setBlocked('ops2', true, ctx);
    const blocked = auth.authenticateSecretHash(hashKeySecret(second.secret));
    assert.ok(blocked instanceof Error && blocked.reason === 'key_blocked');
    await store.setBlocked('ops2', false, ctx);
    await store.revokeKey('ops2', ctx);
    const revoked = auth.authenticateSecretHash(hashKeySecret(second.secret));
    assert.ok(revoked instanceof Error && revoked.reason === 'key_revoked');
    const unknown = auth.authenticateSecretHash(hashKeySecret('never-a-key'));
    assert.ok(unknown instanceof Error && unknown.code === 'UNAUTHENTICATED');
  } finally {
    await store.close();
  }
});
