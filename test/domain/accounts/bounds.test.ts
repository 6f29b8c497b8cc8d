import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { LoginService, SESSION_IDLE_MS, SESSION_PURGE_AFTER_MS, SESSION_PURGE_INTERVAL_MS } from '../../../src/domain/accounts/logins.js';
import { hashPassword } from '../../../src/domain/accounts/passwords.js';
import { AccountService, MAX_ACTIVE_TOKENS } from '../../../src/domain/accounts/service.js';
import { openSqliteStore } from '../../../src/infra/store/sqlite.js';
import { tempDir } from '../../helpers/build.js';

test(`an account holds at most ${MAX_ACTIVE_TOKENS} active tokens; a revoked one makes room`, async (t) => {
  const store = await openSqliteStore(join(tempDir(t), 'tokens.db'));
  t.after(() => store.close());
  const accounts = new AccountService(store);
  const { account, tokenId } = await accounts.createAccount({ email: 'many@example.com', name: 'M' });
  for (let i = 1; i < MAX_ACTIVE_TOKENS; i++) await accounts.issueToken(account, `t${i}`);
  await assert.rejects(accounts.issueToken(account, 'one too many'), /at most 100 active tokens/);
  await accounts.revokeToken(tokenId);
  await accounts.issueToken(account, 'fits again');
});

test('logins purge sessions that ended a day ago, at most once an hour', async (t) => {
  const store = await openSqliteStore(join(tempDir(t), 'sessions.db'));
  t.after(() => store.close());
  let now = Date.parse('2026-03-01T00:00:00Z');
  const clock = () => new Date(now);
  const accounts = new AccountService(store, clock);
  const account = await accounts.register({ email: 's@example.com', name: 'S', passwordHash: await hashPassword('a long password') });
  const logins = new LoginService(store, accounts, 'invite', clock);
  const meta = { ip: '127.0.0.1', userAgent: 'test' };
  const first = await logins.login('s@example.com', 'a long password', meta);
  // The first session expires, and a day more passes.
  now += SESSION_IDLE_MS + SESSION_PURGE_AFTER_MS + 1;
  assert.ok(await store.sessions.find(first.session.id), 'kept until a login purges');
  await logins.login('s@example.com', 'a long password', meta);
  assert.equal(await store.sessions.find(first.session.id), undefined, 'purged at the next login');
  // A session signed out now is due for purging a day later; purges come at most once an hour.
  now += SESSION_PURGE_INTERVAL_MS;
  const second = await logins.login('s@example.com', 'a long password', meta);
  await logins.logout(second.session.id);
  const signedOut = now;
  now = signedOut + SESSION_PURGE_AFTER_MS - 10 * 60_000;
  await logins.login('s@example.com', 'a long password', meta); // purges; the session is not due yet
  now = signedOut + SESSION_PURGE_AFTER_MS + 20 * 60_000;
  await logins.login('s@example.com', 'a long password', meta);
  assert.ok(await store.sessions.find(second.session.id), 'due, but the last purge was 30 minutes ago');
  now = signedOut + SESSION_PURGE_AFTER_MS - 10 * 60_000 + SESSION_PURGE_INTERVAL_MS;
  await logins.login('s@example.com', 'a long password', meta);
  assert.equal(await store.sessions.find(second.session.id), undefined, 'purged an hour after the last purge');
  assert.equal(account.is_admin, false);
});
