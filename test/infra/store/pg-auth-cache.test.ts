import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import pg from 'pg';
import { AccountService } from '../../../src/domain/accounts/service.js';
import { hashToken } from '../../../src/domain/accounts/tokens.js';
import { AUTH_CHANNEL } from '../../../src/infra/store/pg-auth-cache.js';
import type { Store } from '../../../src/domain/store.js';
import { eventually } from '../../helpers/eventually.js';
import { TEST_DATABASE_URL, postgresBackend } from './backends.js';

/**
 * How long the test waits for the LISTEN connection to be up (it opens on the first lookup) before
 * it fails: a give-up, generous for a busy machine, not a figure.
 */
const LISTEN_DEADLINE_MS = 20_000;
/** Revocations tried back to back: a race between a notification and the next lookup shows in a few. */
const REVOCATIONS = 25;

/** A server store, a CLI store (another connection) and a raw client that writes without NOTIFY. */
async function open(t: TestContext, url: string): Promise<{ server: Store; cli: Store; raw: pg.Client; schema: string }> {
  const backend = postgresBackend(url);
  const server = await backend.open();
  const cli = await backend.open();
  const schema = backend.schema;
  const raw = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
  await raw.connect();
  t.after(async () => {
    await raw.end();
    await server.close();
    await cli.close();
    await backend.drop();
  });
  return { server, cli, raw, schema };
}

/**
 * Looks the token up until an answer comes from the cache: a name changed behind the store's
 * back (no NOTIFY) is not seen by a cached lookup.
 */
async function cached(store: Store, raw: pg.Client, hash: string, accountId: number): Promise<void> {
  let i = 0;
  await eventually(
    async () => {
      i++;
      await raw.query('update accounts set name = $1 where id = $2', [`probe ${i}`, accountId]);
      const first = await store.tokens.findByHash(hash);
      await raw.query('update accounts set name = $1 where id = $2', [`probe ${i} changed`, accountId]);
      const second = await store.tokens.findByHash(hash);
      return second?.account.name === first?.account.name;
    },
    { timeoutMs: LISTEN_DEADLINE_MS, intervalMs: 20, what: 'the token to be cached' },
  );
}

if (!TEST_DATABASE_URL) {
  test('postgres auth cache: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;

  test('postgres auth cache: tokens are cached, and a revocation, suspension or plan change through another connection is seen by the very next lookup', async (t) => {
    const { server, cli, raw } = await open(t, url);
    const service = new AccountService(server);
    const { account, token } = await service.createAccount({ email: 'cache@example.com', name: 'C', plan: 'free' });
    const hash = hashToken(token);
    await cached(server, raw, hash, account.id);

    await new AccountService(cli).setPlan('cache@example.com', 'pro');
    assert.equal((await server.tokens.findByHash(hash))?.account.plan, 'pro');
    await new AccountService(cli).setStatus('cache@example.com', 'suspended');
    assert.equal((await server.tokens.findByHash(hash))?.account.status, 'suspended');
    await new AccountService(cli).setStatus('cache@example.com', 'active');

    for (let i = 0; i < REVOCATIONS; i++) {
      const extra = await new AccountService(cli).createToken('cache@example.com', `t${i}`);
      const h = hashToken(extra.token);
      await cached(server, raw, h, account.id);
      await new AccountService(cli).revokeToken(extra.id);
      assert.notEqual((await server.tokens.findByHash(h))?.token.revoked_at, null, `revocation ${i} seen by the next lookup`);
    }
  });

  test('postgres auth cache: nothing is served from the cache once its LISTEN connection is lost, and caching resumes when it is back', async (t) => {
    const { server, raw, schema } = await open(t, url);
    const service = new AccountService(server);
    const { account, token } = await service.createAccount({ email: 'lost@example.com', name: 'L' });
    const hash = hashToken(token);
    await cached(server, raw, hash, account.id);

    // The LISTEN connection names itself after its channel, which carries the test's schema.
    const { rowCount } = await raw.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [
      `${AUTH_CHANNEL}_${schema}`,
    ]);
    assert.ok((rowCount ?? 0) >= 1, 'a LISTEN connection to end');
    await raw.query("update accounts set name = 'after the loss' where id = $1", [account.id]);
    assert.equal((await server.tokens.findByHash(hash))?.account.name, 'after the loss');
    await cached(server, raw, hash, account.id);
  });
}
