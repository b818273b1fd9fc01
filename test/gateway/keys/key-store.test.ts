// The key store's lifecycle on both engines: create, find, list, lookup states, rotate with grace and
// replay, block, revoke, update, teams, audit chain (tampering found), idempotency, last-used batching.
import assert from 'node:assert/strict';
import type { HerdError } from '../../../src/core/errors.ts';
import type { KeyStore } from '../../../src/gateway/keys/key-store.ts';
import { ctx, testBothEngines } from './key-store-harness.ts';

const rejectsWith = (code: string, text?: string) => (err: HerdError) => err.code === code && (text === undefined || err.message.includes(text));

/** Waits (up to 5 s) for another store's view to catch up; the assertion after it says what was expected. */
async function until(seen: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!seen() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
}

async function withStore(open: () => Promise<KeyStore>, body: (store: KeyStore) => Promise<void>): Promise<void> {
  const store = await open();
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

testBothEngines('create, lookup, find, list, revoke', (h) =>
  withStore(h.open, async (store) => {
    assert.equal(store.hasActiveKeys(), false);
    const a = await store.createKey(
      { name: ' ci-bot ', allowedModels: ['gpt-4o*', 'deepseek-v3.2'], rpm: 60, budgets: [{ period: 'day', amountMicros: 5_000_000 }], tags: ['ci'], metadata: { owner: 'ops' } },
      ctx,
    );
    const b = await store.createKey({ name: 'analytics' }, ctx);
    assert.match(a.key.id, /^hk_[0-9A-Za-z]{16}$/);
    assert.ok(a.secret.startsWith(`sk-herd-${a.key.id}-`));
    assert.ok(a.secret.startsWith(a.key.prefix) && a.key.prefix.length < a.secret.length);
    assert.equal(a.key.name, 'ci-bot');
    assert.equal(store.hasActiveKeys(), true);

    const found = store.lookup(a.secret);
    assert.equal(found.state, 'active');
    assert.equal(found.state === 'active' && found.key.id, a.key.id);
    assert.equal(found.state === 'active' && found.key.rpm, 60);
    assert.deepEqual(found.state === 'active' && found.key.budgets, [{ period: 'day', amountMicros: 5_000_000 }]);
    assert.equal(store.lookup(`${a.secret}x`).state, 'unknown');
    assert.equal(store.lookup('').state, 'unknown');

    for (const ref of [a.key.id, 'ci-bot', a.key.prefix, a.secret]) assert.equal((await store.findKey(ref)).id, a.key.id, ref);
    await assert.rejects(store.findKey('nobody'), rejectsWith('NOT_FOUND', "'nobody'"));
    await assert.rejects(store.createKey({ name: 'ci-bot' }, ctx), rejectsWith('ALREADY_EXISTS', a.key.id));

    const page1 = await store.listKeys({ limit: 1 });
    assert.deepEqual(
      page1.items.map((k) => k.id),
      [a.key.id],
    );
    const page2 = await store.listKeys({ limit: 1, cursor: page1.next });
    assert.deepEqual(
      page2.items.map((k) => k.id),
      [b.key.id],
    );
    assert.equal(page2.next, undefined);
    assert.deepEqual(
      (await store.listKeys({ search: 'BOT' })).items.map((k) => k.id),
      [a.key.id],
    );
    assert.ok(!JSON.stringify(page1).includes(a.secret));

    const revoked = await store.revokeKey('ci-bot', ctx);
    assert.equal(revoked.alreadyRevoked, false);
    assert.equal(store.lookup(a.secret).state, 'revoked');
    assert.equal((await store.revokeKey(a.key.id, ctx)).alreadyRevoked, true);
    assert.deepEqual(
      (await store.listKeys({})).items.map((k) => k.id),
      [b.key.id],
    );
    assert.equal((await store.listKeys({ includeRevoked: true })).items.length, 2);
    // A revoked name may be used again.
    const again = await store.createKey({ name: 'ci-bot' }, ctx);
    assert.equal((await store.findKey('ci-bot')).id, again.key.id, 'the live key wins over the revoked one');
    await assert.rejects(store.updateKey(a.key.id, { rpm: 5 }, ctx), rejectsWith('INVALID_ARG', 'revoked'));
  }),
);

testBothEngines('rotate keeps the id; the old secret works through grace, then says rotated; rotation ids replay', (h) => {
  let now = Date.parse('2026-12-01T00:00:00Z');
  return withStore(
    () => h.open({ now: () => now }),
    async (store) => {
      const { key, secret: old } = await store.createKey({ name: 'svc' }, ctx);
      const rotated = await store.rotateKey('svc', { graceMs: 60_000, rotationId: 'rot-0123456789abcdef' }, ctx);
      assert.equal(rotated.key.id, key.id);
      assert.equal(rotated.replayed, false);
      assert.notEqual(rotated.secret, old);
      assert.equal(rotated.graceUntil.getTime(), now + 60_000);
      assert.equal(store.lookup(rotated.secret).state, 'active');
      const grace = store.lookup(old);
      assert.equal(grace.state, 'grace');
      assert.equal(grace.state === 'grace' && grace.graceUntil, now + 60_000);

      const replay = await store.rotateKey(key.id, { rotationId: 'rot-0123456789abcdef' }, ctx);
      assert.equal(replay.replayed, true);
      assert.equal(replay.secret, rotated.secret, 'the same rotation id returns the same secret');
      await assert.rejects(store.rotateKey(key.id, { rotationId: 'short' }, ctx), rejectsWith('INVALID_ARG', 'rotation id'));

      now += 60_001;
      assert.equal(store.lookup(old).state, 'rotated');
      assert.equal(store.lookup(rotated.secret).state, 'active');
      const rows = await h.sql('SELECT hash FROM key_secrets');
      assert.ok(!JSON.stringify(rows).includes(rotated.secret), 'only hashes at rest');
      const sealed = await h.sql('SELECT sealed_secret FROM key_rotations');
      assert.ok(!JSON.stringify(sealed).includes(rotated.secret), 'the replayable secret is sealed');
    },
  );
});

testBothEngines('block, unblock, expiry, update with null, teams and their policy on the key', (h) => {
  let now = Date.parse('2026-12-01T00:00:00Z');
  return withStore(
    () => h.open({ now: () => now }),
    async (store) => {
      const team = await store.createTeam({ name: 'team-a', rpm: 100, allowedModels: ['gpt-4o*'], timezone: 'Asia/Shanghai' }, ctx);
      assert.match(team.id, /^tm_/);
      await assert.rejects(store.createTeam({ name: 'team-a' }, ctx), rejectsWith('ALREADY_EXISTS'));
      await assert.rejects(store.createTeam({ name: 'x', timezone: 'Mars/Olympus' }, ctx), rejectsWith('INVALID_ARG', 'IANA'));
      const k = await store.createKey({ name: 'svc', team: 'team-a', expiresAt: now + 1000, allowedCidrs: ['10.0.0.0/8', '2001:db8::1'] }, ctx);
      const solo = await store.createKey({ name: 'svc' }, ctx);
      assert.deepEqual(k.key.allowedCidrs, ['10.0.0.0/8', '2001:db8::1/128']);
      await assert.rejects(store.createKey({ name: 'svc', team: team.id }, ctx), rejectsWith('ALREADY_EXISTS'));
      await assert.rejects(store.findKey('svc'), rejectsWith('INVALID_ARG', 'team/name'));
      assert.equal((await store.findKey('team-a/svc')).id, k.key.id);
      await assert.rejects(store.createKey({ name: 'bad', allowedCidrs: ['10.0.0.0/33'] }, ctx), rejectsWith('INVALID_ARG', 'CIDR'));

      const info = store.lookup(k.secret);
      assert.equal(info.state === 'active' && info.key.team?.rpm, 100);
      assert.equal(info.state === 'active' && info.key.team?.timezone, 'Asia/Shanghai');

      await store.setBlocked('team-a/svc', true, ctx);
      assert.equal(store.lookup(k.secret).state, 'blocked');
      await store.setBlocked('team-a/svc', false, ctx);
      assert.equal(store.lookup(k.secret).state, 'active');

      const updated = await store.updateKey(solo.key.id, { rpm: 5, tags: ['a'] }, ctx);
      assert.equal(updated.rpm, 5);
      const cleared = await store.updateKey(solo.key.id, { rpm: null }, ctx);
      assert.equal(cleared.rpm, undefined);
      assert.deepEqual(cleared.tags, ['a'], 'fields not in the patch stay');

      await store.updateTeam('team-a', { rpm: 7 }, ctx);
      const afterTeam = store.lookup(k.secret);
      assert.equal(afterTeam.state === 'active' && afterTeam.key.team?.rpm, 7, "a team's change reaches its keys");

      now += 1001;
      assert.equal(store.lookup(k.secret).state, 'expired');
      await assert.rejects(store.deleteTeam('team-a', ctx), rejectsWith('INVALID_ARG', k.key.id));
      await store.revokeKey(k.key.id, ctx);
      assert.equal((await store.deleteTeam('team-a', ctx)).id, team.id);
      await assert.rejects(store.findTeam('team-a'), rejectsWith('NOT_FOUND'));
      const teams = await store.listTeams({});
      assert.equal(teams.items.length, 0);
    },
  );
});

testBothEngines('audit rows for every change, filters and pages, and a chain that finds an edited row', (h) =>
  withStore(h.open, async (store) => {
    const { key, secret } = await store.createKey({ name: 'audited' }, ctx);
    await store.rotateKey(key.id, {}, ctx);
    await store.setBlocked(key.id, true, ctx);
    await store.updateKey(key.id, { rpm: 9 }, ctx);
    await store.revokeKey(key.id, ctx);
    await store.appendAudit([{ action: 'admin.signin', object: 'admin', after: { secret, note: 'x' } }], ctx);
    const all = await store.listAudit({});
    assert.deepEqual(
      all.items.map((e) => e.action),
      ['admin.signin', 'key.revoke', 'key.update', 'key.block', 'key.rotate', 'key.create'],
    );
    assert.equal(all.items[0]?.actorId, 'cli@test');
    assert.equal(all.items[0]?.requestId, 'req-1');
    const dump = JSON.stringify(await h.sql('SELECT * FROM audit_events'));
    assert.ok(!dump.includes(secret), 'no secret in any audit row');
    const page = await store.listAudit({ object: `key:${key.id}`, limit: 2 });
    assert.equal(page.items.length, 2);
    const rest = await store.listAudit({ object: `key:${key.id}`, limit: 10, cursor: page.next });
    assert.equal(rest.items.length, 3);
    assert.deepEqual(await store.verifyAudit(), { ok: true, rows: 6 });

    await h.sql("UPDATE audit_events SET actor_name = 'someone else' WHERE seq = 3");
    const broken = await store.verifyAudit();
    assert.equal(broken.ok, false);
    assert.equal(!broken.ok && broken.brokenSeq, 3);
    assert.match(!broken.ok ? broken.reason : '', /edited/);
    await h.sql('DELETE FROM audit_events WHERE seq = 3');
    const gap = await store.verifyAudit();
    assert.equal(!gap.ok && gap.brokenSeq, 3);
    assert.match(!gap.ok ? gap.reason : '', /missing/);
  }),
);

testBothEngines('idempotent: replay, different request, still running, failures not kept', (h) =>
  withStore(h.open, async (store) => {
    let runs = 0;
    const run = async () => ({ status: 201, body: `{"n":${++runs},"secret":"sk-herd-hk_x-abc"}` });
    const first = await store.idempotent('actor', 'idem-1', 'fp-a', run);
    assert.deepEqual(first, { status: 201, body: '{"n":1,"secret":"sk-herd-hk_x-abc"}', replayed: false });
    const second = await store.idempotent('actor', 'idem-1', 'fp-a', run);
    assert.deepEqual(second, { ...first, replayed: true });
    assert.equal(runs, 1);
    assert.ok(!JSON.stringify(await h.sql('SELECT body FROM admin_idempotency')).includes('sk-herd-hk_x'), 'answers are sealed at rest');
    await assert.rejects(store.idempotent('actor', 'idem-1', 'fp-b', run), rejectsWith('ALREADY_EXISTS', 'different request'));
    assert.equal((await store.idempotent('other-actor', 'idem-1', 'fp-b', run)).replayed, false, 'keys are per actor');

    let release!: () => void;
    const slow = store.idempotent('actor', 'idem-2', 'fp', () => new Promise((resolve) => (release = () => resolve({ status: 200, body: '{}' }))));
    await new Promise((r) => setTimeout(r, 50));
    await assert.rejects(store.idempotent('actor', 'idem-2', 'fp', run), rejectsWith('ALREADY_EXISTS', 'still being processed'));
    release();
    await slow;

    await assert.rejects(store.idempotent('actor', 'idem-3', 'fp', async () => Promise.reject(new Error('boom'))));
    assert.equal((await store.idempotent('actor', 'idem-3', 'fp', run)).replayed, false, 'a failed run can be retried');
  }),
);

testBothEngines('touch is written in batches, at close at the latest', async (h) => {
  let keyId = '';
  await withStore(h.open, async (store) => {
    keyId = (await store.createKey({ name: 'used' }, ctx)).key.id;
    store.touch(keyId, 1_000);
    store.touch(keyId, 5_000);
    store.touch(keyId, 3_000);
    assert.deepEqual(await h.sql('SELECT last_used_at FROM key_last_used'), [], 'not written per request');
  });
  await withStore(h.open, async (store) => {
    assert.equal((await store.findKey(keyId)).lastUsedAt?.getTime(), 5_000);
  });
});

testBothEngines('two stores on one database: changes on one are seen by the other, the audit chain stays one chain under concurrent writers', async (h) => {
  const a = await h.open();
  const b = await h.open();
  try {
    const made = await a.createKey({ name: 'shared' }, ctx);
    // SQLite: B's next lookup notices A's commit by data_version; PostgreSQL: B hears A's NOTIFY and re-reads what changed.
    await until(() => b.lookup(made.secret).state === 'active');
    assert.equal(b.lookup(made.secret).state, 'active');
    assert.equal(b.hasActiveKeys(), true);
    await a.setBlocked(made.key.id, true, ctx);
    await until(() => b.lookup(made.secret).state === 'blocked');
    assert.equal(b.lookup(made.secret).state, 'blocked');
    // Incremental re-reads on PostgreSQL: a team's change reaches its keys, a rotation brings the new secret.
    await a.createTeam({ name: 'ops', rpm: 10 }, ctx);
    const member = await a.createKey({ name: 'member', team: 'ops' }, ctx);
    await a.updateTeam('ops', { rpm: 20 }, ctx);
    const rotated = await a.rotateKey('ops/member', { graceMs: 60_000 }, ctx);
    await until(() => b.lookup(member.secret).state === 'grace');
    const seen = b.lookup(rotated.secret);
    assert.equal(seen.state === 'active' && seen.key.team?.rpm, 20);
    assert.equal(b.lookup(member.secret).state, 'grace');
    // An edit by hand: SQLite's triggers move the revision; on PostgreSQL refresh() re-reads everything.
    await h.sql('UPDATE gateway_keys SET blocked = 0 WHERE id = ?', [made.key.id]);
    if (h.kind === 'postgres') await b.refresh();
    assert.equal(b.lookup(made.secret).state, 'active');

    await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).createTeam({ name: `team-${i}` }, ctx)));
    await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).appendAudit([{ action: 'admin.signin', object: 'admin' }], ctx)));
    assert.deepEqual(await b.verifyAudit(), { ok: true, rows: 20 });
  } finally {
    await a.close();
    await b.close();
  }
});

testBothEngines('an unreachable or closed store says where it is, never a password', async (h) => {
  if (h.kind === 'postgres') {
    const { openKeyStore } = await import('../../../src/gateway/keys/open-key-store.ts');
    await assert.rejects(
      openKeyStore('postgres://herd:s3cret-pw@127.0.0.1:1/herd', { schema: 'h_store_nowhere' }),
      (err: HerdError) => err.code === 'UNAVAILABLE' && err.message.includes('postgres://herd@127.0.0.1:1/herd') && !err.message.includes('s3cret'),
    );
  }
  const store = await h.open();
  await store.close();
  await assert.rejects(store.createKey({ name: 'late' }, ctx), rejectsWith('UNAVAILABLE', 'closed'));
});

testBothEngines('last-used times of many keys are written in a few statements, never backwards', async (h) => {
  const ids = Array.from({ length: 1203 }, (_, i) => `hk_touch${i}`);
  await withStore(h.open, async (store) => {
    for (const id of ids) store.touch(id, 10_000);
  });
  await withStore(h.open, async (store) => {
    store.touch('hk_touch0', 5_000);
  });
  const rows = await h.sql('SELECT COUNT(*) AS n, MIN(last_used_at) AS low FROM key_last_used');
  assert.equal(Number(rows[0]?.n), ids.length);
  assert.equal(Number(rows[0]?.low), 10_000, 'an older time never overwrites a newer one');
});
