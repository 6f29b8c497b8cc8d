import assert from 'node:assert/strict';
import { test } from 'node:test';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { TEST_DATABASE_URL, postgresBackend } from '../infra/store/backends.js';

if (!TEST_DATABASE_URL) {
  test('the API on PostgreSQL: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  test('the API on PostgreSQL: accounts, tokens, revocation and usage', async (t) => {
    const backend = postgresBackend(url);
    const store = await backend.open();
    const app = await composeApp({ config: loadConfig({ DATABASE_URL: url, NETDIAG_DNS_SERVERS: '127.0.0.1:1' }), store, logger: false });
    t.after(async () => {
      await app.close();
      await store.close();
      await backend.drop();
    });
    const accounts = new AccountService(store);
    const { token } = await accounts.createAccount({ email: 'pg@example.com', name: 'PG', plan: 'pro' });
    const get = (path: string, tok = token) => app.inject({ method: 'GET', url: path, headers: { authorization: `Bearer ${tok}` } });

    const user = await get('/api/user');
    assert.equal(user.statusCode, 200);
    assert.equal(user.json().data.plan, 'pro');
    assert.equal((await get('/api/nope')).statusCode, 404);
    const stats = (await get('/api/usage/stats')).json().data;
    assert.deepEqual(stats.today, { requests: 3, successful: 2, failed: 1, rate_limited: 0 });

    // revoked through a second connection, as the CLI would
    const other = await backend.open();
    const extra = await new AccountService(other).createToken('pg@example.com', 'temp');
    assert.equal((await get('/api/user', extra.token)).statusCode, 200);
    await new AccountService(other).revokeToken(extra.id);
    await other.close();
    assert.equal((await get('/api/user', extra.token)).statusCode, 401);
  });
}
