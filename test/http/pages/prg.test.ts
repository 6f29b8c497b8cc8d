import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../../helpers/build.js';
import { PASSWORD, PageClient, setPassword } from './browserless.js';

const TOKEN = /nd_[0-9A-Za-z]{40}/;
const INVITE_LINK = /<code id="invite-link" class="secret">([^<]*)<\/code>/;

async function signedInAdmin(t: import('node:test').TestContext) {
  const b = await build(t);
  const self = (await b.store.accounts.findByEmail('tester@example.com'))!;
  await b.store.accounts.update(self.id, { is_admin: true });
  await setPassword(b.store, 'tester@example.com', PASSWORD);
  const other = await b.accounts.createAccount({ email: 'other@example.com', name: 'Other', plan: 'free' });
  const client = new PageClient(b.url);
  await client.signIn('tester@example.com', PASSWORD);
  return { b, client, other: other.account };
}

test('dashboard: a new token is made by a POST answered with a 303; the page it leads to shows it once, a reload neither repeats the POST nor shows it again', async (t) => {
  const { b, client } = await signedInAdmin(t);
  const self = (await b.store.accounts.findByEmail('tester@example.com'))!;
  const before = (await b.accounts.listTokensOf(self.id)).length;
  await client.get('/tokens');
  const posted = await client.post('/tokens', { label: 'ci', expiry: '30' });
  assert.equal(posted.status, 303);
  const location = posted.headers.get('location')!;
  assert.equal(location, '/tokens');
  assert.ok(!TOKEN.test(posted.html), 'the POST answer carries no token');
  for (const line of posted.headers.getSetCookie()) assert.ok(!TOKEN.test(line), `no token in a cookie in the clear: ${line}`);
  const shown = await client.get(location);
  const token = TOKEN.exec(shown.html)?.[0];
  assert.ok(token, 'the page the redirect leads to shows the new token');
  assert.equal((await b.api('/api/user', { token })).status, 200);
  const reload = await client.get(location);
  assert.ok(!reload.html.includes(token), 'a reload does not show it again');
  assert.equal((await b.accounts.listTokensOf(self.id)).length, before + 1, 'one token, however often the page is reloaded');

  // The kept token is for this session only: another session of the account never sees it.
  const elsewhere = new PageClient(b.url);
  await elsewhere.signIn('tester@example.com', PASSWORD);
  await client.get('/tokens');
  const flash = await client.post('/tokens', { label: 'second', expiry: '30' });
  assert.equal(flash.status, 303);
  for (const line of flash.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const eq = pair!.indexOf('=');
    if (pair!.slice(0, eq) !== 'netdiag_session') elsewhere.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
  }
  assert.ok(!TOKEN.test((await elsewhere.get('/tokens')).html), 'another session cannot read the kept token');
  assert.ok(TOKEN.test((await client.get('/tokens')).html), 'this session can');
});

test('dashboard: every form POST that changes something answers with a 303 to a page', async (t) => {
  const { b, client, other } = await signedInAdmin(t);
  await client.get('/settings');
  const NEW = 'another long password';
  const password = await client.submit('/settings/password', { current_password: PASSWORD, new_password: NEW, new_password_again: NEW });
  assert.match(password.html, /Your password is changed/);
  await client.get('/admin');
  const plan = await client.submit(`/admin/accounts/${other.id}/plan`, { plan: 'pro', q: 'other' });
  assert.match(plan.html, /The account other@example\.com is now on the pro plan/);
  assert.match(plan.html, /value="other"/, 'the search is kept');
  const suspended = await client.submit(`/admin/accounts/${other.id}/status`, { status: 'suspended' });
  assert.match(suspended.html, /The account other@example\.com is suspended/);
  const resumed = await client.submit(`/admin/accounts/${other.id}/status`, { status: 'active' });
  assert.match(resumed.html, /The account other@example\.com is active again/);
  const invited = await client.submit('/admin/invitations', { email: '', plan: 'basic' });
  const link = INVITE_LINK.exec(invited.html)?.[1];
  assert.ok(link, 'the invitation link is shown on the page the redirect leads to');
  assert.ok(!invited.posted.headers.get('location')!.includes(new URL(link).searchParams.get('invite')!), 'never in the URL');
  assert.ok(!INVITE_LINK.test((await client.get('/admin')).html), 'and only once');
  await client.get('/settings');
  await client.submit('/settings/webhook-secret/rotate', {});
  await client.get('/tokens');
  const made = await client.submit('/tokens', { label: 'x', expiry: 'never' });
  const id = /action="\/tokens\/(\d+)\/revoke"/.exec(made.html)?.[1];
  assert.ok(id);
  await client.submit(`/tokens/${id}/revoke`, {});
  assert.equal((await client.post('/logout', {})).status, 303);
  void b;
});
