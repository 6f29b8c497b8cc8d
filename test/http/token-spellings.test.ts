import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { build } from '../helpers/build.js';
import { roomyLimiter } from '../helpers/roomy-limiter.js';
import { TEST_DATABASE_URL, postgresBackend } from '../infra/store/backends.js';
import { checkResponses } from '../helpers/contract.js';

/**
 * One token spelt many ways (`Bearer` + N spaces, any case of the scheme) is one token: every
 * spelling authenticates, and no memo on the request path keeps an entry per spelling (each
 * spelling is kilobytes; one entry per spelling was 10,000 keys and +104 MB).
 */

/** Distinct spellings sent: with one memo entry each they would hold SPELLINGS × ~PAD bytes. */
const SPELLINGS = 2_000;
const PAD = 4_000;
/** Growth of the heap allowed after the spellings (one entry per spelling would be over 8 MB per memo). */
const MAX_GROWTH_BYTES = 4 * 1024 * 1024;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

const SCHEMES = ['Bearer', 'bearer', 'BEARER', 'bEaReR'];
const spelling = (token: string, i: number) => `${SCHEMES[i % SCHEMES.length]}${' '.repeat(PAD + i)}${token}`;

async function spellingsShareOneEntry(t: TestContext, app: FastifyInstance, token: string): Promise<void> {
  const get = (authorization: string) => app.inject({ method: 'GET', url: '/api/user', headers: { authorization } });
  // Warm: the first request of a token fills every memo once.
  assert.equal((await get(`Bearer ${token}`)).statusCode, 200);
  const before = heapAfterGc();
  for (let i = 0; i < SPELLINGS; i++) {
    const res = await get(spelling(token, i));
    assert.equal(res.statusCode, 200, `spelling ${i}: ${res.body}`);
  }
  const growth = heapAfterGc() - before;
  t.diagnostic(`heap growth after ${SPELLINGS} spellings: ${(growth / 1e6).toFixed(2)} MB`);
  assert.ok(growth < MAX_GROWTH_BYTES, `the heap grew by ${(growth / 1e6).toFixed(1)} MB after ${SPELLINGS} spellings of one token`);
}

test('SQLite: many spellings of one token all authenticate and share one memo entry', async (t) => {
  const { app, token } = await build(t, { deps: { limiter: roomyLimiter() } });
  await spellingsShareOneEntry(t, app, token);
});

if (!TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) {
  test('PostgreSQL + Redis spellings: skipped because TEST_DATABASE_URL or TEST_REDIS_URL is unset', { skip: 'unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  test('PostgreSQL + Redis: many spellings of one token all authenticate and share one memo entry', async (t) => {
    // The limiter is Redis. A second per request on a day of this process's own: 60 a minute,
    // within the enterprise plan's 120.
    let at = Date.UTC(2003, 0, 1, 0, 0, 0) + (process.pid % 1000) * 4 * 86_400_000;
    const clock = () => new Date((at += 1000));
    const backend = postgresBackend(url);
    const store = await backend.open();
    const config = loadConfig({ DATABASE_URL: url, NETDIAG_DNS_SERVERS: '127.0.0.1:1', REDIS_URL: process.env.TEST_REDIS_URL! });
    const app = await composeApp({ config, store, logger: false, clock, recordUsage: false });
    checkResponses(t, app);
    t.after(async () => {
      await app.close();
      await store.close();
      await backend.drop();
    });
    const { token } = await new AccountService(store, clock).createAccount({ email: `${backend.schema}@example.com`, name: 'Spell', plan: 'enterprise' });
    await spellingsShareOneEntry(t, app, token);
  });
}
