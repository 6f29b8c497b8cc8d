/**
 * The README's screenshots, made again from the pages as they are now:
 *   node --import tsx scripts/readme-screenshots.ts
 * docs/images/dashboard-overview.png: the overview of an account with 30 days of usage;
 * docs/images/dashboard-checks.png: the job page of a port scan of two loopback listeners, run
 * from the Checks form. The real app on a temporary SQLite file, in headless Chromium that
 * reaches nothing but loopback (test/helpers/chromium.ts). Run it after changing what they show.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { composeApp } from '../src/compose-app.js';
import { loadConfig } from '../src/config.js';
import { hashPassword } from '../src/domain/accounts/passwords.js';
import { AccountService } from '../src/domain/accounts/service.js';
import type { UsageRecord } from '../src/domain/usage/repository.js';
import { utcDay } from '../src/domain/usage/service.js';
import { openSqliteStore } from '../src/infra/store/sqlite.js';
import { CHROMIUM, TEST_HOST } from '../test/helpers/chromium.js';

const IMAGES = fileURLToPath(new URL('../docs/images/', import.meta.url));
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery staple';
/** Ports IANA names, for listeners the scan finds open (the first two that are free here). */
const NAMED = [[8080, 'http-alt'], [1080, 'socks'], [5900, 'vnc'], [1883, 'mqtt'], [6000, 'x11']] as const;

const dir = mkdtempSync(join(tmpdir(), 'netdiag-shots-'));
const config = loadConfig({ DATABASE_URL: `sqlite:${join(dir, 'netdiag.db')}`, NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1', LOG_LEVEL: 'silent' });
const store = await openSqliteStore(join(dir, 'netdiag.db'));
const accounts = new AccountService(store);
await accounts.createAccount({ email: EMAIL, name: 'Ada Lovelace', plan: 'basic' });
const account = (await store.accounts.findByEmail(EMAIL))!;
await store.accounts.setPasswordHash(account.id, await hashPassword(PASSWORD));

// 30 days of calls to four endpoints, some failed or rate limited, as the overview draws them.
const records: UsageRecord[] = [];
const now = Date.now();
for (let d = 29; d >= 1; d--) {
  ['/ip/lookup', '/dns/lookup', '/port/scan-range', '/proxy/check'].forEach((endpoint, k) => {
    const n = 8 + ((d * 37 + k * 53) % 40);
    for (let i = 0; i < n; i++) records.push({ account_id: account.id, day: utcDay(now - d * 86_400_000), endpoint, outcome: i % 17 === 0 ? 'failed' : i % 23 === 0 ? 'rate_limited' : 'successful', duration_ms: 3 + ((i * 7) % 40) });
  });
}
await store.usage.record(records);

const listeners: net.Server[] = [];
const open: number[] = [];
for (const [port] of NAMED) {
  if (open.length === 2) break;
  const server = net.createServer((s) => s.destroy());
  const ok = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (ok) {
    listeners.push(server);
    open.push(port);
  }
}

const app = await composeApp({ config, store, logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const origin = `http://${TEST_HOST}:${(app.server.address() as net.AddressInfo).port}`;
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-proxy-server', `--host-resolver-rules=MAP ${TEST_HOST} 127.0.0.1, MAP * ~NOTFOUND`] });
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  await page.goto(`${origin}/login`);
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForURL(`${origin}/`), page.getByRole('button', { name: 'Sign in' }).click()]);

  // A scan from the Checks form, followed to its result.
  await page.goto(`${origin}/checks/port-scan-range`);
  await page.getByLabel('Host', { exact: true }).fill('127.0.0.1');
  await page.getByLabel('Ports').fill(`${open.join(',')},1-20`);
  await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole('button', { name: 'Run' }).click()]);
  await page.getByRole('heading', { name: `Open ports (${open.length})` }).waitFor();
  await page.getByText('Show every port: open, closed and filtered').click();
  await page.screenshot({ path: join(IMAGES, 'dashboard-checks.png') });

  await page.goto(`${origin}/`);
  await page.screenshot({ path: join(IMAGES, 'dashboard-overview.png') });
  console.log(`wrote ${IMAGES}dashboard-overview.png and dashboard-checks.png`);
} finally {
  await browser.close();
  await app.close();
  await store.close();
  for (const s of listeners) s.close();
  rmSync(dir, { recursive: true, force: true });
}
