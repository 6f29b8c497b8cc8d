import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { build, type Built } from '../../helpers/build.js';
import { TEST_HOST, auditSchemes, chromiumMissing, launchBrowser, newContext } from '../../helpers/chromium.js';
import { PASSWORD, setPassword } from './browserless.js';

// Chromium process: one browser at a time (scripts/test-tree.mjs).

/**
 * The dashboard as people use it, in Debian's Chromium: a new user signs up, makes a token, calls
 * the API with it, sees the call on the overview, revokes the token; an admin invites someone,
 * changes a plan and suspends an account. Every step saves a screenshot under
 * test-output/dashboard/, and axe-core checks every page for WCAG 2.1 A/AA violations in the
 * light and the dark scheme, at a desktop width and at 375 px.
 */

const HOST = TEST_HOST;
const OUTPUT = fileURLToPath(new URL('../../../test-output/dashboard/', import.meta.url));
const noChromium = chromiumMissing("the dashboard's browser tests were");
const ADMIN = 'tester@example.com';

/** A person of their own (a fresh context) in the test's one browser. */
function launch(browser: Browser, viewport = { width: 1280, height: 900 }): Promise<BrowserContext> {
  return newContext(browser, { viewport });
}

/** Everything a page asked for that was not this origin, and every console complaint (CSP refusals show there). */
function watch(page: Page, origin: string): { foreign: string[]; console: string[] } {
  const seen = { foreign: [] as string[], console: [] as string[] };
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) seen.foreign.push(r.url());
  });
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') seen.console.push(m.text());
  });
  // Forms that ask before something irreversible: the person says yes.
  page.on('dialog', (d) => void d.accept());
  return seen;
}

/** A screenshot of the step, and axe-core's verdict on the page in both colour schemes. */
async function step(page: Page, name: string, checked: Map<string, number>): Promise<void> {
  // By step: after post/redirect/get several states share a path (/admin after a plan change, a suspension, an invitation).
  await auditSchemes(page, OUTPUT, name, (scheme, violations) => checked.set(`${name} ${new URL(page.url()).pathname} ${scheme}`, violations));
}

/** Clicks a form's button and waits for the page the form answers with (its own load event, not the current page's). */
async function submit(page: Page, button: string | RegExp): Promise<void> {
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: button }).first().click()]);
}

async function originOf(b: Built): Promise<string> {
  return `http://${HOST}:${new URL(b.url).port}`;
}

test('the dashboard in Chromium: sign up, token, call, usage, revoke; admin: invite, plan, suspend; no WCAG 2.1 A/AA violation on any page', { skip: noChromium, timeout: 240_000 }, async (t) => {
  const b = await build(t, { env: { NETDIAG_SIGNUP: 'open' } });
  const browser = await launchBrowser(t);
  await setPassword(b.store, ADMIN, PASSWORD);
  await b.store.accounts.update((await b.store.accounts.findByEmail(ADMIN))!.id, { is_admin: true });
  const origin = await originOf(b);
  const checked = new Map<string, number>();
  const api = (token: string) => fetch(`${b.url}/api/user`, { headers: { authorization: `Bearer ${token}` } });

  // --- A new user ---
  const user = await (await launch(browser)).newPage();
  const userSeen = watch(user, origin);
  await user.goto(`${origin}/`);
  assert.match(user.url(), /\/login\?next=%2F$/, 'signed out, the dashboard sends to the login');
  await step(user, '01-login', checked);
  await Promise.all([user.waitForEvent('load'), user.getByRole('link', { name: 'Create one' }).click()]);
  await step(user, '02-signup', checked);
  await user.getByLabel('Name').fill('Grace Hopper');
  await user.getByLabel('E-mail').fill('grace@example.com');
  await user.locator('#password').fill(PASSWORD);
  await user.getByLabel('Password, again').fill(PASSWORD);
  await submit(user, 'Create account');
  assert.match(user.url(), /\/tokens\?welcome=1$/, await user.locator('main').innerText());
  await step(user, '03-welcome', checked);

  await user.getByLabel(/^Label/).fill('laptop');
  await user.getByLabel('In 90 days').check();
  await submit(user, 'Create token');
  const token = (await user.locator('#new-token').textContent())!.trim();
  assert.match(token, /^nd_[0-9A-Za-z]{40}$/);
  await step(user, '04-token-created', checked);

  // The test calls the API with the token the page showed.
  const called = await api(token);
  assert.equal(called.status, 200);
  const used = ((await called.json()) as { data: { api_calls_used: number } }).data.api_calls_used;
  assert.equal(used, 1);

  // A call run as a job shows on the jobs page.
  const job = await fetch(`${b.url}/api/ipv6/validate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', prefer: 'respond-async' },
    body: JSON.stringify({ ipv6: '2001:db8::1' }),
  });
  assert.equal(job.status, 202);
  await Promise.all([user.waitForEvent('load'), user.getByRole('link', { name: 'Jobs' }).click()]);
  await step(user, '05-jobs', checked);
  assert.match(await user.locator('main').innerText(), /\/ipv6\/validate/);

  await Promise.all([user.waitForEvent('load'), user.getByRole('link', { name: 'Overview' }).click()]);
  await step(user, '06-overview-after-call', checked);
  const body = await user.locator('main').innerText();
  assert.match(body, /grace@example\.com|Grace Hopper/);
  // The calls are in the 30-day table beneath the chart: today's row, 2 requests (the call and the job's creation), 2 successful.
  const today = new Date().toISOString().slice(0, 10);
  // The day table is folded behind its summary.
  await user.getByText('Show all days').click();
  const row = user.locator('table tr', { has: user.locator(`text=${today}`) }).first();
  const cells = (await row.locator('td, th').allInnerTexts()).map((c) => c.trim());
  assert.ok(cells.includes(today) || cells.some((c) => c.includes(today)), `today's row: ${cells.join(' | ')}`);
  assert.deepEqual(cells.slice(1, 3), ['2', '2'], `today's row shows 2 requests, 2 successful: ${cells.join(' | ')}`);

  await Promise.all([user.waitForEvent('load'), user.getByRole('link', { name: 'Tokens' }).click()]);
  assert.equal(await user.locator('#new-token').count(), 0, 'the token is not shown again');
  await submit(user, /^Revoke/);
  await step(user, '07-token-revoked', checked);
  assert.equal((await api(token)).status, 401, 'the revoked token is refused');

  // A second token for the admin's suspension below.
  await submit(user, 'Create token');
  const second = (await user.locator('#new-token').textContent())!.trim();
  assert.equal((await api(second)).status, 200);

  await Promise.all([user.waitForEvent('load'), user.getByRole('link', { name: 'Settings' }).click()]);
  await step(user, '08-settings', checked);

  // --- The admin ---
  const admin = await (await launch(browser)).newPage();
  const adminSeen = watch(admin, origin);
  await admin.goto(`${origin}/login`);
  await admin.getByLabel('E-mail').fill(ADMIN);
  await admin.getByLabel('Password').fill(PASSWORD);
  await submit(admin, 'Sign in');
  await Promise.all([admin.waitForEvent('load'), admin.getByRole('link', { name: 'Admin' }).click()]);
  await step(admin, '09-admin', checked);

  await admin.getByLabel(/^E-mail/).fill('invited@example.com');
  await admin.getByLabel('Plan', { exact: true }).selectOption('pro');
  await submit(admin, 'Create invitation link');
  const link = (await admin.locator('#invite-link').textContent())!.trim();
  assert.match(link, /\/signup\?invite=[A-Za-z0-9_-]{43}$/);
  await step(admin, '10-invitation', checked);

  const invited = await (await launch(browser)).newPage();
  watch(invited, origin);
  await invited.goto(link);
  await step(invited, '11-invited-signup', checked);
  await invited.getByLabel('Name').fill('Invited Person');
  await invited.locator('#password').fill(PASSWORD);
  await invited.getByLabel('Password, again').fill(PASSWORD);
  await submit(invited, 'Create account');
  assert.equal((await b.store.accounts.findByEmail('invited@example.com'))?.plan, 'pro', 'the invitation gave its plan');

  // Change Grace's plan, then suspend her: her token gets 403.
  await admin.getByLabel('Search by e-mail or name').fill('grace');
  await submit(admin, 'Search');
  await admin.getByLabel('Plan of grace@example.com').selectOption('basic');
  await submit(admin, /Set the plan of grace@example\.com/);
  await step(admin, '12-plan-changed', checked);
  assert.equal(((await (await api(second)).json()) as { data: { plan: string } }).data.plan, 'basic');
  await submit(admin, /Suspend grace@example\.com/);
  await step(admin, '13-suspended', checked);
  const refused = await api(second);
  assert.equal(refused.status, 403);
  assert.equal(((await refused.json()) as { error: string }).error, 'forbidden');

  // --- At 375 px: the pages a phone shows, checked the same way ---
  const phone = await (await launch(browser, { width: 375, height: 800 })).newPage();
  watch(phone, origin);
  await phone.goto(`${origin}/login`);
  await phone.getByLabel('E-mail').fill(ADMIN);
  await phone.getByLabel('Password').fill(PASSWORD);
  await submit(phone, 'Sign in');
  for (const [path, name] of [['/', '14-phone-overview'], ['/tokens', '15-phone-tokens'], ['/jobs', '16-phone-jobs'], ['/settings', '17-phone-settings'], ['/admin', '18-phone-admin']] as const) {
    await phone.goto(origin + path);
    await step(phone, name, checked);
    const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `${path} at 375 px scrolls sideways by ${overflow} px`);
  }

  for (const seen of [userSeen, adminSeen]) {
    assert.deepEqual(seen.foreign, [], 'nothing was loaded from another origin');
    assert.deepEqual(seen.console.filter((c) => /Content Security Policy|Refused/i.test(c)), [], 'no CSP refusal');
  }
  assert.ok(checked.size >= 16, `axe checked ${checked.size} page states`);
});
