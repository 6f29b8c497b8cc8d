import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Backend } from './backends.js';

/** The dashboard's part of the store contract (sessions, one-time links, webhook secrets), run against every backend. */
export function dashboardStoreSuite(make: () => Backend): void {
  const name = make().name;
  const at = '2026-03-01T10:00:00.000Z';
  const later = '2026-03-02T10:00:00.000Z';

  const opened = async (t: { after: (fn: () => Promise<void>) => void }) => {
    const backend = make();
    const store = await backend.open();
    t.after(async () => {
      await store.close();
      await backend.drop();
    });
    return store;
  };

  test(`${name} store: admin flag, password hash, search by e-mail or name with LIKE characters taken literally`, async (t) => {
    const store = await opened(t);
    const admin = await store.accounts.create({ name: 'Root', email: 'root@example.com', plan: 'enterprise', created_at: at, is_admin: true, password_hash: 'h1' });
    const other = await store.accounts.create({ name: 'Ann_100%', email: 'ann@example.org', plan: 'free', created_at: at });
    assert.equal(admin.is_admin, true);
    assert.equal(other.is_admin, false);
    assert.equal(await store.accounts.passwordHash(admin.id), 'h1');
    assert.equal(await store.accounts.passwordHash(other.id), null);
    await store.accounts.setPasswordHash(other.id, 'h2');
    assert.equal(await store.accounts.passwordHash(other.id), 'h2');
    assert.equal((await store.accounts.update(other.id, { is_admin: true }))?.is_admin, true);
    assert.deepEqual((await store.accounts.search('EXAMPLE.', 10)).map((a) => a.id), [admin.id, other.id]);
    assert.deepEqual((await store.accounts.search('ann', 10)).map((a) => a.id), [other.id]);
    assert.deepEqual((await store.accounts.search('_100%', 10)).map((a) => a.id), [other.id]);
    assert.deepEqual((await store.accounts.search('n_1', 10)).map((a) => a.id), [other.id]);
    assert.deepEqual((await store.accounts.search('%', 10)).map((a) => a.id), [other.id], '% is a character, not a wildcard');
    assert.equal((await store.accounts.search('', 1)).length, 1, 'the limit holds');
  });

  test(`${name} store: a token keeps its expiry`, async (t) => {
    const store = await opened(t);
    const a = await store.accounts.create({ name: 'A', email: 'a@example.com', plan: 'free', created_at: at });
    const tok = await store.tokens.create({ account_id: a.id, label: 'x', hash: 'hash-x', prefix: 'nd_x', created_at: at, expires_at: later });
    assert.equal(tok.expires_at, later);
    assert.equal((await store.tokens.findByHash('hash-x'))?.token.expires_at, later);
  });

  test(`${name} store: sessions are found with their account, slide, and are revoked one by one or all but one`, async (t) => {
    const store = await opened(t);
    const a = await store.accounts.create({ name: 'A', email: 'a@example.com', plan: 'free', created_at: at });
    const row = (id: string, seen: string) => ({ id, account_id: a.id, created_at: at, last_seen_at: seen, expires_at: later, user_agent: 'UA', ip: '127.0.0.1' });
    const s1 = await store.sessions.create(row('s1', at));
    await store.sessions.create(row('s2', '2026-03-01T11:00:00.000Z'));
    await store.sessions.create(row('s3', '2026-03-01T12:00:00.000Z'));
    assert.deepEqual(s1, { ...row('s1', at), revoked_at: null });
    const found = await store.sessions.find('s1');
    assert.equal(found?.account.email, 'a@example.com');
    assert.equal(found?.session.id, 's1');
    assert.equal(await store.sessions.find('nope'), undefined);
    await store.sessions.touch('s1', '2026-03-01T13:00:00.000Z', '2026-03-03T10:00:00.000Z');
    assert.equal((await store.sessions.find('s1'))?.session.expires_at, '2026-03-03T10:00:00.000Z');
    assert.deepEqual((await store.sessions.listActive(a.id, at)).map((s) => s.id), ['s1', 's3', 's2'], 'newest use first');
    await store.sessions.revoke('s2', at);
    assert.equal((await store.sessions.find('s2'))?.session.revoked_at, at);
    assert.equal(await store.sessions.revokeAll(a.id, at, 's1'), 1, 's3 only: s2 was revoked already, s1 is kept');
    assert.deepEqual((await store.sessions.listActive(a.id, at)).map((s) => s.id), ['s1']);
    assert.deepEqual(await store.sessions.listActive(a.id, '2026-03-04T00:00:00.000Z'), [], 'expired sessions are not active');
    assert.equal(await store.sessions.purge('2026-03-02T00:00:00.000Z'), 2, 'the two revoked before the cutoff');
    assert.equal(await store.sessions.revokeAll(a.id, at), 1);
  });

  test(`${name} store: a one-time link is consumed exactly once, and never after it expired`, async (t) => {
    const store = await opened(t);
    const a = await store.accounts.create({ name: 'A', email: 'a@example.com', plan: 'free', created_at: at });
    await store.authLinks.create({ hash: 'l1', kind: 'password', account_id: a.id, email: null, plan: null, created_by: null, created_at: at, expires_at: later });
    await store.authLinks.create({ hash: 'l2', kind: 'invite', account_id: null, email: 'new@example.com', plan: 'pro', created_by: a.id, created_at: at, expires_at: later });
    const results = await Promise.all([1, 2, 3].map(() => store.authLinks.consume('l1', at)));
    assert.deepEqual(results.sort(), [false, false, true]);
    assert.equal((await store.authLinks.find('l1'))?.used_at, at);
    assert.equal(await store.authLinks.consume('l2', '2026-03-05T00:00:00.000Z'), false, 'expired');
    assert.equal(await store.authLinks.consume('zz', at), false);
    const invites = await store.authLinks.listInvites(10);
    assert.deepEqual(invites.map((l) => [l.hash, l.email, l.plan, l.created_by]), [['l2', 'new@example.com', 'pro', a.id]]);
  });

  test(`${name} store: the webhook secret is made once, and a rotation keeps the old one as previous`, async (t) => {
    const store = await opened(t);
    const a = await store.accounts.create({ name: 'A', email: 'a@example.com', plan: 'free', created_at: at });
    const [first, second] = await Promise.all([
      store.webhookSecrets.get(a.id, { secret: 'whsec_one', created_at: at }),
      store.webhookSecrets.get(a.id, { secret: 'whsec_two', created_at: at }),
    ]);
    assert.equal(first.secret, second.secret, 'the first writer wins');
    const rotated = await store.webhookSecrets.rotate(a.id, { secret: 'whsec_three', created_at: later }, '2026-03-03T10:00:00.000Z');
    assert.deepEqual(rotated, { account_id: a.id, secret: 'whsec_three', created_at: later, previous_secret: first.secret, previous_until: '2026-03-03T10:00:00.000Z' });
    assert.deepEqual(await store.webhookSecrets.get(a.id, { secret: 'unused', created_at: at }), rotated);
  });
}
