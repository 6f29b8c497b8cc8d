import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccountService } from '../../../src/domain/accounts/service.js';
import { hashToken } from '../../../src/domain/accounts/tokens.js';
import type { Backend } from './backends.js';

/** The store contract, run against every backend. */
export function storeSuite(make: () => Backend): void {
  const name = make().name;

  test(`${name} store: accounts and tokens round-trip; e-mails are unique`, async (t) => {
    const backend = make();
    const store = await backend.open();
    t.after(async () => {
      await store.close();
      await backend.drop();
    });
    const at = '2026-01-02T03:04:05.000Z';
    const a = await store.accounts.create({ name: 'A', email: 'a@example.com', plan: 'pro', created_at: at });
    assert.deepEqual(a, { id: a.id, name: 'A', email: 'a@example.com', plan: 'pro', status: 'active', created_at: at, is_admin: false });
    await assert.rejects(store.accounts.create({ name: 'B', email: 'a@example.com', plan: 'free', created_at: at }));
    const b = await store.accounts.create({ name: 'B', email: 'b@example.com', plan: 'free', created_at: at });
    assert.equal(await store.accounts.count(), 2);
    assert.deepEqual((await store.accounts.list()).map((x) => x.email), ['a@example.com', 'b@example.com']);
    assert.deepEqual(await store.accounts.findByEmail('b@example.com'), b);
    assert.deepEqual(await store.accounts.findById(a.id), a);
    assert.equal(await store.accounts.findByEmail('nobody@example.com'), undefined);
    assert.equal((await store.accounts.update(a.id, { status: 'suspended' }))?.status, 'suspended');

    const tok = await store.tokens.create({ account_id: b.id, label: 'ci', hash: hashToken('nd_x'), prefix: 'nd_x', created_at: at });
    assert.deepEqual(tok, { id: tok.id, account_id: b.id, label: 'ci', prefix: 'nd_x', created_at: at, last_used_at: null, revoked_at: null, expires_at: null });
    // Tokens made before migration 0005 have no prefix.
    const old = await store.tokens.create({ account_id: a.id, label: 'old', hash: hashToken('nd_old'), created_at: at });
    assert.equal(old.prefix, null);
    assert.equal((await store.tokens.findById(old.id))?.prefix, null);
    const found = await store.tokens.findByHash(hashToken('nd_x'));
    assert.deepEqual(found, { token: tok, account: b });
    assert.equal(await store.tokens.findByHash(hashToken('nd_y')), undefined);
    assert.deepEqual((await store.tokens.listByAccount(b.id)).map((x) => x.id), [tok.id]);
    const revoked = await store.tokens.revoke(tok.id, at);
    assert.equal(revoked?.revoked_at, at);
    assert.equal(await store.tokens.revoke(tok.id, at), undefined, 'revoking twice changes nothing');
    assert.equal((await store.tokens.findByHash(hashToken('nd_x')))?.token.revoked_at, at);
    await store.ping();
  });

  test(`${name} store: a revocation through another connection is seen on the next lookup`, async (t) => {
    const backend = make();
    const server = await backend.open();
    const cli = await backend.open();
    t.after(async () => {
      await server.close();
      await cli.close();
      await backend.drop();
    });
    const service = new AccountService(server);
    const { token } = await service.createAccount({ email: 'c@example.com', name: 'C' });
    assert.equal((await service.authenticate(`Bearer ${token}`)).account.email, 'c@example.com');
    const [row] = await new AccountService(cli).listTokens('c@example.com');
    await new AccountService(cli).revokeToken(row!.id);
    // A request sent after the revocation completed is read in a later turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    await assert.rejects(service.authenticate(`Bearer ${token}`), /revoked/);
    await new AccountService(cli).setStatus('c@example.com', 'suspended');
  });

  test(`${name} store: last_used_at is written when the store closes`, async (t) => {
    const backend = make();
    const store = await backend.open();
    t.after(() => backend.drop());
    const service = new AccountService(store, () => new Date('2026-05-06T07:08:09.000Z'));
    const { token } = await service.createAccount({ email: 'd@example.com', name: 'D' });
    await service.authenticate(`Bearer ${token}`);
    await store.close();
    const again = await backend.open();
    const [row] = await again.tokens.listByAccount(1);
    assert.equal(row?.last_used_at, '2026-05-06T07:08:09.000Z');
    await again.close();
  });
}
