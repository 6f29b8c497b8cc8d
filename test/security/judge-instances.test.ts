import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { Judge, parseEcho, parseUploadReceipt, SPEED_DOWNLOAD_BYTES } from '../../src/domain/proxy/index.js';
import { openSqliteStore } from '../../src/infra/store/sqlite.js';
import type { Store } from '../../src/domain/store.js';
import { EXIT_ADDRESS, startHttpProxy, startSocksProxy, startTlsTarget } from '../fixtures/proxies.js';
import { tempDir } from '../helpers/build.js';
import { postgresBackend, TEST_DATABASE_URL } from '../infra/store/backends.js';

/**
 * Issue 14: several instances behind one judge URL. Two apps share one database (one SQLite
 * file, or PostgreSQL when TEST_DATABASE_URL is set) and nothing else: no NETDIAG_JUDGE_SECRET,
 * so the judge's key is the one the first of them stored. A nonce issued by either is accepted
 * by the other's judge, once.
 */

interface Instance {
  app: FastifyInstance;
  store: Store;
  url: string;
}

async function instance(t: TestContext, store: Store, env: Record<string, string>): Promise<Instance> {
  const config = loadConfig({ DATABASE_URL: 'sqlite:unused', NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', ...env });
  const app = await composeApp({ config, store, logger: false });
  t.after(async () => {
    await app.close();
    await store.close();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return { app, store, url: typeof address === 'object' && address ? `http://127.0.0.1:${address.port}` : '' };
}

/** Connections to one shared database; `drop` removes it once the instances have closed. */
type Open = (t: TestContext) => { open: () => Promise<Store>; drop: () => Promise<void> };

const sqlite: Open = (t) => {
  const path = join(tempDir(t), 'shared.db');
  return { open: () => openSqliteStore(path), drop: async () => undefined };
};

const postgres =
  (url: string): Open =>
  () =>
    postgresBackend(url);

function instancesSuite(name: string, open: Open): void {
  test(`${name}: a check on one instance is judged by the other's judge, speed test included`, async (t) => {
    const db = open(t);
    const tls = await startTlsTarget();
    const elite = await startHttpProxy({ kind: 'elite' });
    const socks5 = await startSocksProxy({ version: 5 });
    t.after(() => Promise.all([tls.close(), elite.close(), socks5.close()]));
    const judgeSide = await instance(t, await db.open(), { NETDIAG_SSL_CHECK_TARGET: tls.address });
    // The checking instance sends every proxy to the other's judge, as behind one judge URL.
    const checking = await instance(t, await db.open(), { NETDIAG_SSL_CHECK_TARGET: tls.address, NETDIAG_JUDGE_URL: `${judgeSide.url}/judge` });
    // after() hooks run in the order they were added: the database goes once both instances closed.
    t.after(db.drop);
    const { token } = await new AccountService(checking.store).createAccount({ email: 'two@example.com', name: 'Two', plan: 'enterprise' });

    const res = await fetch(`${checking.url}/api/proxy/check-bulk`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ proxies: [elite.address, `socks5://${socks5.address}`] }),
    });
    assert.equal(res.status, 200);
    const { data } = (await res.json()) as { data: Array<{ status: string; protocol: string; anonymity_level: string; exit_ip: string; error: string | null; checks: Record<string, { status: string; error: string | null }> }> };
    assert.deepEqual(data.map((r) => [r.status, r.protocol, r.anonymity_level, r.exit_ip, r.error]), [
      ['working', 'http', 'elite', EXIT_ADDRESS, null],
      ['working', 'socks5', 'elite', EXIT_ADDRESS, null],
    ]);
    for (const r of data) assert.equal(r.checks.speed?.status, 'ok', r.checks.speed?.error ?? '');
  });

  test(`${name}: a nonce issued by one instance is accepted by the other's judge route once, then 404 on both`, async (t) => {
    const db = open(t);
    const one = await instance(t, await db.open(), {});
    const two = await instance(t, await db.open(), {});
    t.after(db.drop);
    // The judge instance one's checker holds: the same class over the same shared ledger.
    const issuer = new Judge({ ledger: one.store.judge });
    const key = await issuer.key();
    const nonce = await issuer.issue();

    const echo = await fetch(`${two.url}/judge/${nonce}`);
    assert.equal(echo.status, 200);
    const verified = parseEcho(Buffer.from(await echo.arrayBuffer()), nonce, key);
    assert.ok(verified, "the other instance's echo is signed with the shared key");
    assert.equal(verified.remote_address, '127.0.0.1');
    for (const base of [one.url, two.url]) assert.equal((await fetch(`${base}/judge/${nonce}`)).status, 404, `a second echo on ${base}`);

    const download = await fetch(`${one.url}/judge/${nonce}/download`);
    assert.equal(download.status, 200);
    assert.equal((await download.arrayBuffer()).byteLength, SPEED_DOWNLOAD_BYTES);
    for (const base of [two.url, one.url]) assert.equal((await fetch(`${base}/judge/${nonce}/download`)).status, 404, `a second download on ${base}`);

    const upload = () =>
      fetch(`${two.url}/judge/${nonce}/upload`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: new Uint8Array(1000) });
    const first = await upload();
    assert.equal(first.status, 200);
    assert.equal(parseUploadReceipt(Buffer.from(await first.arrayBuffer()), nonce, key), 1000);
    assert.equal((await upload()).status, 404);

    // Revoked on one instance: the other refuses its unspent uses at once.
    const second = await issuer.issue();
    await issuer.revoke(second);
    assert.equal((await fetch(`${two.url}/judge/${second}`)).status, 404);
  });
}

instancesSuite('two instances on one SQLite file', sqlite);
if (TEST_DATABASE_URL) instancesSuite('two instances on one PostgreSQL database', postgres(TEST_DATABASE_URL));
else test('two instances on PostgreSQL: skipped because TEST_DATABASE_URL is unset', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
