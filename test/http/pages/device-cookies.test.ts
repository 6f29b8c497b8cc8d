import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config.js';
import { LOGIN_LIMITS } from '../../../src/http/pages/throttle.js';
import { build, tempDir } from '../../helpers/build.js';
import { serve } from '../../helpers/serve.js';
import { PASSWORD, PageClient, setPassword } from './browserless.js';

/** Every attempt in one minute, whatever the wall clock does. */
const AT = new Date('2026-06-01T12:00:05Z');
const OWNER = 'tester@example.com';
const OWNER_ADDRESS = { 'x-forwarded-for': '198.51.100.7' };
const STRANGER = { 'x-forwarded-for': '203.0.113.9' };

async function attempt(c: PageClient, email: string, password: string, headers: Record<string, string>): Promise<number> {
  await c.get('/login', headers);
  return (await c.post('/login', { email, password }, headers)).status;
}

test('dashboard: failed sign-ins by others never stop the owner: a browser that signed in before keeps signing in (device cookie)', async (t) => {
  const b = await build(t, { env: { NETDIAG_TRUST_PROXY: '127.0.0.1' }, deps: { clock: () => AT } });
  await setPassword(b.store, OWNER, PASSWORD);
  await b.accounts.createAccount({ email: 'other@example.com', name: 'Other' });
  await setPassword(b.store, 'other@example.com', PASSWORD);

  // The owner signed in from this browser once, and signed out.
  const owner = new PageClient(b.url);
  assert.equal(await attempt(owner, OWNER, PASSWORD, OWNER_ADDRESS), 303);
  assert.ok(owner.cookies.get('netdiag_device'), 'a device cookie is set at a successful sign-in');
  await owner.get('/', OWNER_ADDRESS);
  assert.equal((await owner.post('/logout', {}, OWNER_ADDRESS)).status, 303);
  assert.ok(owner.cookies.get('netdiag_device'), 'signing out keeps the device cookie');

  // Strangers guess the owner's password until the account-wide lockout, and fill the owner's address's window.
  const stranger = new PageClient(b.url);
  // (The owner's own sign-in was the e-mail's first attempt of this minute.)
  for (let i = 1; i < LOGIN_LIMITS.perEmail.minute; i++) assert.equal(await attempt(stranger, OWNER, 'wrong password', STRANGER), 401);
  assert.equal(await attempt(stranger, OWNER, PASSWORD, STRANGER), 429, 'a stranger with the right password is throttled');
  const neighbour = new PageClient(b.url);
  for (let i = 0; i < LOGIN_LIMITS.perAddress.minute; i++) await attempt(neighbour, `x${i}@example.com`, 'wrong password', OWNER_ADDRESS);
  assert.equal(await attempt(neighbour, 'other@example.com', PASSWORD, OWNER_ADDRESS), 429, "the owner's address is throttled for browsers without the cookie");

  // The owner's browser is judged by its device cookie alone.
  assert.equal(await attempt(owner, OWNER, PASSWORD, OWNER_ADDRESS), 303, 'the owner signs in despite the lockout');
  assert.equal((await owner.get('/', OWNER_ADDRESS)).status, 200);

  // The cookie names its account: for another account it is a stranger's browser.
  for (let i = 0; i < LOGIN_LIMITS.perEmail.minute; i++) await attempt(stranger, 'other@example.com', 'wrong password', STRANGER);
  const asOther = new PageClient(b.url);
  for (const [k, v] of owner.cookies) if (k === 'netdiag_device') asOther.cookies.set(k, v);
  assert.equal(await attempt(asOther, 'other@example.com', PASSWORD, STRANGER), 429, "the owner's device cookie does not open another account");

  // A forged or altered cookie is no cookie.
  const forged = new PageClient(b.url);
  const value = owner.cookies.get('netdiag_device')!;
  forged.cookies.set('netdiag_device', value.slice(0, -2) + (value.endsWith('AA') ? 'BB' : 'AA'));
  assert.equal(await attempt(forged, OWNER, PASSWORD, STRANGER), 429, 'an altered device cookie is throttled as a stranger');

  // Guessing with a stolen device cookie is throttled by that cookie.
  const thief = new PageClient(b.url);
  thief.cookies.set('netdiag_device', value);
  const statuses: number[] = [];
  for (let i = 0; i < LOGIN_LIMITS.perEmail.minute + 1; i++) statuses.push(await attempt(thief, OWNER, 'wrong password', STRANGER));
  assert.deepEqual(statuses.slice(-1), [429], `the device cookie's own window: ${statuses.join(' ')}`);
  assert.equal(await attempt(thief, OWNER, PASSWORD, STRANGER), 429);
});

test('first start: the first admin is NETDIAG_ADMIN_EMAIL', async (t) => {
  const dbPath = join(tempDir(t), 'server.db');
  const first = await serve(dbPath, true, { NETDIAG_ADMIN_EMAIL: 'Ops@Example.com' });
  t.after(() => first.child.kill('SIGKILL'));
  assert.match(first.stdout(), /created the first account ops@example\.com \(admin/);
  const res = await fetch(`http://127.0.0.1:${first.port}/api/user`, { headers: { authorization: `Bearer ${first.token}` } });
  assert.equal(((await res.json()) as { data: { email: string } }).data.email, 'ops@example.com');
});

test('NETDIAG_ADMIN_EMAIL: admin@localhost unless set; not an e-mail address stops the server', () => {
  assert.equal(loadConfig({}).adminEmail, 'admin@localhost');
  assert.equal(loadConfig({ NETDIAG_ADMIN_EMAIL: ' Ops@Example.com ' }).adminEmail, 'ops@example.com');
  assert.throws(() => loadConfig({ NETDIAG_ADMIN_EMAIL: 'not an address' }), /NETDIAG_ADMIN_EMAIL/);
});

test('dashboard: a sign-up sets a device cookie too; a browser keeps the entries of several accounts', async (t) => {
  const b = await build(t, { env: { NETDIAG_SIGNUP: 'open' } });
  const c = new PageClient(b.url);
  await c.get('/signup');
  assert.equal((await c.post('/signup', { name: 'N', email: 'new@example.com', password: PASSWORD, confirm: PASSWORD })).status, 303);
  const first = c.cookies.get('netdiag_device');
  assert.ok(first, 'the sign-up sets a device cookie');
  // Another account signed in from the same browser: both entries are kept.
  await c.get('/');
  await c.post('/logout', {});
  await setPassword(b.store, OWNER, PASSWORD);
  await c.signIn(OWNER, PASSWORD);
  const both = c.cookies.get('netdiag_device')!;
  assert.equal(both.split('~').length, 2, both);
  assert.ok(both.endsWith(first), 'the new entry first, the earlier account\'s after it');
});
