import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Judge } from '../../../src/domain/proxy/index.js';
import type { NonceUse } from '../../../src/domain/proxy/judge-repository.js';
import type { Store } from '../../../src/domain/store.js';
import { TEST_DATABASE_URL, postgresBackend, sqliteBackend, type Backend } from './backends.js';

/**
 * The judge's shared state, run against every backend: two connections to one database stand
 * for two instances behind one judge URL.
 */
function judgeSuite(make: () => Backend): void {
  const name = make().name;

  async function twoInstances(t: import('node:test').TestContext): Promise<[Store, Store]> {
    const backend = make();
    const one = await backend.open();
    const two = await backend.open();
    t.after(async () => {
      await one.close();
      await two.close();
      await backend.drop();
    });
    return [one, two];
  }

  test(`${name} store: the judge secret is the first one stored, whoever asks`, async (t) => {
    const [one, two] = await twoInstances(t);
    const [a, b] = await Promise.all([one.judge.secret('candidate-one'), two.judge.secret('candidate-two')]);
    assert.equal(a, b, 'both instances agree');
    assert.ok(a === 'candidate-one' || a === 'candidate-two');
    assert.equal(await one.judge.secret('a later candidate'), a);
  });

  test(`${name} store: each use of a nonce is spent exactly once, across connections racing for it`, async (t) => {
    const [one, two] = await twoInstances(t);
    const expiresAt = Date.now() + 60_000;
    for (const use of ['echo', 'download', 'upload'] as const) {
      const wins = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? one : two).judge.spend('n1', use, expiresAt)));
      assert.equal(wins.filter(Boolean).length, 1, use);
    }
    assert.equal(await one.judge.spend('n2', 'echo', expiresAt), true, 'another nonce is another row');
  });

  test(`${name} store: spendAll spends what is left; purge forgets only nonces expired by then`, async (t) => {
    const [one, two] = await twoInstances(t);
    assert.equal(await one.judge.spend('old', 'echo', 1_000), true);
    assert.equal(await one.judge.spend('new', 'download', 5_000), true);
    await two.judge.spendAll([{ id: 'old', expiresAt: 1_000 }, { id: 'new', expiresAt: 5_000 }]);
    await two.judge.spendAll([{ id: 'old', expiresAt: 1_000 }]);
    await two.judge.spendAll([]);
    for (const id of ['old', 'new']) {
      for (const use of ['echo', 'download', 'upload'] satisfies NonceUse[]) assert.equal(await one.judge.spend(id, use, 5_000), false, `${id} ${use}`);
    }
    assert.equal(await one.judge.purge(999), 0);
    assert.equal(await one.judge.purge(1_000), 3, 'the three uses of the expired nonce');
    assert.equal(await one.judge.spend('new', 'upload', 5_000), false, 'the live one is still spent');
    assert.equal(await two.judge.purge(10_000), 3);
  });

  test(`${name} store: a nonce issued by one instance's judge is admitted once by the other's, then by neither`, async (t) => {
    const [one, two] = await twoInstances(t);
    const issuer = new Judge({ ledger: one.judge });
    const other = new Judge({ ledger: two.judge });
    assert.deepEqual(await issuer.key(), await other.key(), 'the secret made by one is read by the other');
    const nonce = await issuer.issue();
    assert.equal(await other.admit(nonce, 'echo'), true);
    assert.equal(await issuer.admit(nonce, 'echo'), false);
    assert.equal(await issuer.admit(nonce, 'download'), true);
    await issuer.revoke(nonce);
    assert.equal(await other.admit(nonce, 'upload'), false, 'revoked on one, refused on the other');
  });
}

judgeSuite(sqliteBackend);
if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  judgeSuite(() => postgresBackend(url));
} else {
  test('postgres store (judge): skipped because TEST_DATABASE_URL is unset', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
}
