import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { composeApp } from '../../../src/compose-app.js';
import { loadConfig } from '../../../src/config.js';
import { AccountService } from '../../../src/domain/accounts/service.js';
import { LOGIN_LIMITS } from '../../../src/http/pages/throttle.js';
import { TEST_DATABASE_URL, postgresBackend } from '../../infra/store/backends.js';
import { PASSWORD, PageClient, setPassword } from './browserless.js';

const DAY_MS = 86_400_000;
const TOKEN = /nd_[0-9A-Za-z]{40}/;
let tests = 0;

/** Two instances on one PostgreSQL schema and one Redis, on a day of their own (so no other run's windows count). */
async function twoInstances(t: TestContext, url: string, redisUrl: string) {
  const at = Date.UTC(2003, 0, 1, 12, 0, 5) + ((process.pid % 1000) * 8 + tests++) * DAY_MS;
  const clock = () => new Date(at);
  const backend = postgresBackend(url);
  const config = loadConfig({ DATABASE_URL: url, NETDIAG_DNS_SERVERS: '127.0.0.1:1', REDIS_URL: redisUrl, NETDIAG_TRUST_PROXY: '127.0.0.1' });
  const stores = [await backend.open(), await backend.open()];
  const apps: FastifyInstance[] = await Promise.all(stores.map((store) => composeApp({ config, store, logger: false, clock })));
  t.after(async () => {
    for (const app of apps) await app.close();
    for (const store of stores) await store.close();
    await backend.drop();
  });
  for (const app of apps) await app.listen({ port: 0, host: '127.0.0.1' });
  const [a, b] = apps.map((app) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`);
  const email = `${backend.schema}@example.com`;
  await new AccountService(stores[0]!, clock).createAccount({ email, name: 'Owner' });
  await setPassword(stores[0]!, email, PASSWORD);
  return { a: a!, b: b!, email, tag: backend.schema.replace(/_/g, '') };
}

/** The same browser sent to the other instance by a load balancer. */
function sameBrowser(from: PageClient, base: string): PageClient {
  const c = new PageClient(base);
  for (const [k, v] of from.cookies) c.cookies.set(k, v);
  return c;
}

if (!TEST_DATABASE_URL || !process.env.TEST_REDIS_URL) {
  test('dashboard on PostgreSQL + Redis: skipped because TEST_DATABASE_URL or TEST_REDIS_URL is unset', { skip: 'TEST_DATABASE_URL or TEST_REDIS_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  const redisUrl = process.env.TEST_REDIS_URL;

  test('dashboard on PostgreSQL + Redis, two instances: one /64 is throttled once across both; the owner\'s device cookie works on both', async (t) => {
    const { a, b, email, tag } = await twoInstances(t, url, redisUrl);
    const bases = [a, b];
    const net = `2001:db8:${(process.pid % 65_000).toString(16)}:${tests.toString(16)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const c = new PageClient(bases[i % 2]!);
      const headers = { 'x-forwarded-for': `${net}:${(i + 1).toString(16)}::1` };
      await c.get('/login', headers);
      statuses.push((await c.post('/login', { email: `g${i}-${tag}@example.com`, password: 'wrong password' }, headers)).status);
    }
    assert.equal(statuses.filter((s) => s !== 429).length, LOGIN_LIMITS.perAddress.minute, statuses.join(' '));

    const owner = new PageClient(a);
    await owner.signIn(email, PASSWORD);
    const stranger = new PageClient(b);
    for (let i = 0; i < LOGIN_LIMITS.perEmail.minute; i++) {
      await stranger.get('/login');
      await stranger.post('/login', { email, password: 'wrong password' });
    }
    await stranger.get('/login');
    assert.equal((await stranger.post('/login', { email, password: PASSWORD })).status, 429, 'the e-mail is locked for strangers on both');
    const onB = sameBrowser(owner, b);
    onB.cookies.delete('netdiag_session');
    await onB.get('/login');
    assert.equal((await onB.post('/login', { email, password: PASSWORD })).status, 303, 'the owner\'s browser signs in on the other instance');
  });

  test('dashboard on PostgreSQL + Redis, two instances: a token made on one is shown once by the other', async (t) => {
    const { a, b, email } = await twoInstances(t, url, redisUrl);
    const onA = new PageClient(a);
    await onA.signIn(email, PASSWORD);
    await onA.get('/tokens');
    const posted = await onA.post('/tokens', { label: 'lb', expiry: '30' });
    assert.equal(posted.status, 303);
    const onB = sameBrowser(onA, b);
    const shown = await onB.get(posted.headers.get('location')!);
    assert.ok(TOKEN.test(shown.html), 'the other instance shows the new token');
    assert.ok(!TOKEN.test((await onB.get('/tokens')).html), 'once');
  });
}
