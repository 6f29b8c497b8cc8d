import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { AccountService, UNKNOWN_TOKEN_MEMO_MAX_ENTRIES, UNKNOWN_TOKEN_MEMO_TTL_MS } from '../../../src/domain/accounts/service.js';
import { hashToken } from '../../../src/domain/accounts/tokens.js';
import { UnauthorizedError } from '../../../src/errors.js';
import type { Store } from '../../../src/domain/store.js';
import { openSqliteStore, type SqliteStore } from '../../../src/infra/store/sqlite.js';
import { tempDir } from '../../helpers/build.js';

/**
 * Unknown tokens cost no database read when seen again (issue 38), for a bounded number of
 * tokens and a bounded time, and the memo never refuses a token the store knows.
 */

/** A real store whose lookups by hash are counted, and a service on it with a clock the test moves. */
async function counted(t: TestContext): Promise<{ store: SqliteStore; service: AccountService; reads: () => number; advance: (ms: number) => void }> {
  const store = await openSqliteStore(join(tempDir(t), 'tokens.db'));
  t.after(() => store.close());
  let reads = 0;
  const findByHash = store.tokens.findByHash.bind(store.tokens);
  store.tokens.findByHash = (hash) => {
    reads++;
    return findByHash(hash);
  };
  let now = Date.parse('2026-11-28T03:00:00Z');
  const service = new AccountService(store, () => new Date(now));
  return { store, service, reads: () => reads, advance: (ms) => (now += ms) };
}

const unknown = (i: number): string => `nd_${String(i).padStart(40, 'u')}`;

test('an unknown token is read once, then refused from the memo (by its hash) until the memo ages it out', async (t) => {
  const { service, reads, advance } = await counted(t);
  await assert.rejects(service.verifyToken(unknown(1)), /^UnauthorizedError: the API token is not known$/);
  assert.equal(reads(), 1);
  await assert.rejects(service.verifyToken(unknown(1)), UnauthorizedError);
  await assert.rejects(service.verifyTokenHash(hashToken(unknown(1))), UnauthorizedError);
  assert.equal(reads(), 1, 'no read for a token seen unknown');
  advance(UNKNOWN_TOKEN_MEMO_TTL_MS - 1);
  await assert.rejects(service.verifyToken(unknown(1)), UnauthorizedError);
  assert.equal(reads(), 1);
  advance(2);
  await assert.rejects(service.verifyToken(unknown(1)), UnauthorizedError);
  assert.equal(reads(), 2, 'aged out: asked again');
});

test('the memo holds at most UNKNOWN_TOKEN_MEMO_MAX_ENTRIES tokens, the least recently seen dropped', async () => {
  // A store that knows no token: ten thousand lookups of a real one would only make this slow.
  let read = 0;
  const reads = () => read;
  const service = new AccountService({ tokens: { findByHash: async () => void read++ } } as unknown as Store);
  for (let i = 0; i <= UNKNOWN_TOKEN_MEMO_MAX_ENTRIES; i++) await assert.rejects(service.verifyToken(unknown(i)), UnauthorizedError);
  assert.equal(reads(), UNKNOWN_TOKEN_MEMO_MAX_ENTRIES + 1);
  await assert.rejects(service.verifyToken(unknown(UNKNOWN_TOKEN_MEMO_MAX_ENTRIES)), UnauthorizedError);
  assert.equal(reads(), UNKNOWN_TOKEN_MEMO_MAX_ENTRIES + 1, 'the newest is remembered');
  await assert.rejects(service.verifyToken(unknown(0)), UnauthorizedError);
  assert.equal(reads(), UNKNOWN_TOKEN_MEMO_MAX_ENTRIES + 2, 'the oldest was dropped');
});

test('known tokens are never in it: revoked ones are refused by the store each time, new ones admitted at once', async (t) => {
  const { service, reads } = await counted(t);
  const { account, token, tokenId } = await service.createAccount({ email: 'a@example.com', name: 'A' });
  assert.equal((await service.verifyToken(token)).account.id, account.id);
  await service.revokeToken(tokenId);
  const before = reads();
  for (let i = 0; i < 2; i++) await assert.rejects(service.verifyToken(token), /has been revoked/);
  assert.equal(reads(), before + 2, 'a revoked token is a row: the store answers it');
  // A token made after unknown ones were seen is admitted at once.
  await assert.rejects(service.verifyToken(unknown(7)), UnauthorizedError);
  const fresh = await service.issueToken(account, 'later');
  assert.equal((await service.verifyToken(fresh.token)).tokenId, fresh.id);
});
