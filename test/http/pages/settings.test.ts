import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { build } from '../../helpers/build.js';
import { PageClient, PASSWORD, setPassword } from './browserless.js';

const EMAIL = 'tester@example.com';
const NEW_PASSWORD = 'a different passphrase';

async function setup(t: TestContext) {
  const b = await build(t);
  await setPassword(b.store, EMAIL, PASSWORD);
  const client = new PageClient(b.url);
  await client.signIn(EMAIL, PASSWORD);
  return { b, client };
}

/** The session ids the settings page offers to sign out (the viewer's other sessions). */
function revokeIds(html: string): string[] {
  return [...html.matchAll(/action="\/settings\/sessions\/([0-9a-f]{64})\/revoke"/g)].map((m) => m[1]!);
}

async function canSignIn(url: string, password: string): Promise<boolean> {
  const c = new PageClient(url);
  await c.get('/login');
  const res = await c.post('/login', { email: EMAIL, password });
  return res.status === 303;
}

test('settings page: member only, with its three sections', async (t) => {
  const { b, client } = await setup(t);
  const page = await client.get('/settings');
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('cache-control'), 'no-store');
  assert.match(page.html, /aria-current="page">Settings/);
  for (const h of ['Password', 'Signed-in sessions', 'Webhook signing secret']) assert.ok(page.html.includes(`>${h}</h2>`), h);
  const anon = new PageClient(b.url);
  const res = await anon.get('/settings');
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/login?next=%2Fsettings');
  const post = await anon.post('/settings/webhook-secret/rotate', {});
  assert.equal(post.status, 303);
  assert.match(post.headers.get('location') ?? '', /^\/login/);
});

test('settings page: a wrong current password is a 400 and the old password still works', async (t) => {
  const { b, client } = await setup(t);
  await client.get('/settings');
  const res = await client.post('/settings/password', { current_password: 'not it at all', new_password: NEW_PASSWORD, new_password_again: NEW_PASSWORD });
  assert.equal(res.status, 400);
  assert.match(res.html, /role="alert">Current password: is not the password of this account/);
  const differ = await client.post('/settings/password', { current_password: PASSWORD, new_password: NEW_PASSWORD, new_password_again: `${NEW_PASSWORD}!` });
  assert.equal(differ.status, 400);
  assert.match(differ.html, /the two new passwords differ/);
  const short = await client.post('/settings/password', { current_password: PASSWORD, new_password: 'short', new_password_again: 'short' });
  assert.equal(short.status, 400);
  assert.match(short.html, /New password: must be at least/);
  assert.ok(await canSignIn(b.url, PASSWORD));
  assert.ok(!(await canSignIn(b.url, NEW_PASSWORD)));
  assert.equal((await client.get('/settings')).status, 200, 'still signed in');
});

test('settings page: a password change signs out the other sessions and keeps this one', async (t) => {
  const { b, client } = await setup(t);
  const other = new PageClient(b.url);
  await other.signIn(EMAIL, PASSWORD);
  assert.equal((await other.get('/settings')).status, 200);
  await client.get('/settings');
  const res = await client.submit('/settings/password', { current_password: PASSWORD, new_password: NEW_PASSWORD, new_password_again: NEW_PASSWORD });
  assert.equal(res.status, 200);
  assert.match(res.html, /role="status">Your password is changed/);
  const gone = await other.get('/settings');
  assert.equal(gone.status, 303);
  assert.match(gone.headers.get('location') ?? '', /^\/login/);
  const stays = await client.get('/settings');
  assert.equal(stays.status, 200);
  assert.equal(revokeIds(stays.html).length, 0, 'no other session left');
  assert.ok(await canSignIn(b.url, NEW_PASSWORD));
  assert.ok(!(await canSignIn(b.url, PASSWORD)));
});

test('settings page: sessions are listed, and the other one can be signed out', async (t) => {
  const { b, client } = await setup(t);
  const other = new PageClient(b.url);
  await other.get('/login');
  const signedIn = await other.post('/login', { email: EMAIL, password: PASSWORD }, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' });
  assert.equal(signedIn.status, 303);
  const page = await client.get('/settings');
  assert.match(page.html, /<caption>2 active sessions<\/caption>/);
  assert.match(page.html, /\(this session\)/);
  assert.match(page.html, /Firefox on Linux/);
  assert.match(page.html, /<code>127\.0\.0\.1<\/code>/);
  const ids = revokeIds(page.html);
  assert.equal(ids.length, 1, 'one other session to sign out');
  const res = await client.post(`/settings/sessions/${ids[0]}/revoke`, {});
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/settings?done=signed-out');
  assert.equal((await other.get('/settings')).status, 303, 'the other is signed out');
  const after = await client.get('/settings?done=signed-out');
  assert.equal(after.status, 200);
  assert.match(after.html, /That session is signed out/);
  assert.match(after.html, /<caption>1 active session<\/caption>/);
});

test("settings page: another account's session id is left alone", async (t) => {
  const { b, client } = await setup(t);
  await b.accounts.createAccount({ email: 'other@example.com', name: 'Other', plan: 'free' });
  await setPassword(b.store, 'other@example.com', PASSWORD);
  const stranger = new PageClient(b.url);
  await stranger.signIn('other@example.com', PASSWORD);
  const account = await b.store.accounts.findByEmail('other@example.com');
  const [theirs] = await b.store.sessions.listActive(account!.id, new Date().toISOString());
  assert.ok(theirs);
  await client.get('/settings');
  const res = await client.post(`/settings/sessions/${theirs.id}/revoke`, {});
  assert.equal(res.status, 303);
  assert.equal((await stranger.get('/settings')).status, 200, 'still signed in');
  for (const bad of ['x', 'A'.repeat(64), '../revoke-all']) {
    const r = await client.post(`/settings/sessions/${encodeURIComponent(bad)}/revoke`, {});
    assert.ok(r.status === 303 || r.status === 404, `${bad}: ${r.status}`);
  }
  assert.equal((await stranger.get('/settings')).status, 200);
  assert.equal((await client.get('/settings')).status, 200);
});

test('settings page: sign out everywhere ends every session, this one too', async (t) => {
  const { b, client } = await setup(t);
  const other = new PageClient(b.url);
  await other.signIn(EMAIL, PASSWORD);
  await client.get('/settings');
  const res = await client.post('/settings/sessions/revoke-all', {});
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/login');
  assert.ok(![...client.cookies.keys()].includes('netdiag_session'), 'the cookie is cleared');
  for (const c of [client, other]) {
    const r = await c.get('/settings');
    assert.equal(r.status, 303);
    assert.match(r.headers.get('location') ?? '', /^\/login/);
  }
  assert.equal((await b.api('/api/user')).status, 200, 'API tokens are not affected');
});

test('settings page: the webhook secret is shown, and rotation keeps the previous one valid', async (t) => {
  const { b, client } = await setup(t);
  const page = await client.get('/settings');
  const secret = /<code id="webhook-secret" class="secret">([^<]*)<\/code>/.exec(page.html)?.[1];
  assert.ok(secret);
  assert.match(secret, /^whsec_[A-Za-z0-9+/=]{40,}$/);
  assert.match(page.html, /data-copy="webhook-secret"/);
  assert.ok(!page.html.includes('is still valid'));
  const account = await b.store.accounts.findByEmail(EMAIL);
  const stored = await b.store.webhookSecrets.get(account!.id, { secret: 'whsec_not-this-one', created_at: new Date().toISOString() });
  assert.equal(stored.secret, secret, "the account's stored secret");

  const res = await client.post('/settings/webhook-secret/rotate', {});
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/settings?done=rotated');
  const after = await client.get('/settings?done=rotated');
  const rotated = /<code id="webhook-secret" class="secret">([^<]*)<\/code>/.exec(after.html)?.[1];
  assert.ok(rotated);
  assert.match(rotated, /^whsec_/);
  assert.notEqual(rotated, secret);
  assert.match(after.html, /keeps signing deliveries for 24 hours/);
  assert.match(after.html, /The previous secret \(<code>/);
  assert.ok(after.html.includes(`${secret.slice(0, 10)}…`), 'names the previous one by its start');
  assert.match(after.html, /is still valid/);
  const until = /signature by it too until <time datetime="([^"]+)"/.exec(after.html)?.[1];
  assert.ok(until);
  assert.ok(Math.abs(Date.parse(until) - Date.now() - 86_400_000) < 60_000);
});

test('settings page: posts without the CSRF token are refused and change nothing', async (t) => {
  const { b, client } = await setup(t);
  const other = new PageClient(b.url);
  await other.signIn(EMAIL, PASSWORD);
  const page = await client.get('/settings');
  const secret = /<code id="webhook-secret" class="secret">([^<]*)<\/code>/.exec(page.html)![1];
  const [otherId] = revokeIds(page.html);
  const posts: Array<[string, Record<string, string>]> = [
    ['/settings/password', { current_password: PASSWORD, new_password: NEW_PASSWORD, new_password_again: NEW_PASSWORD }],
    [`/settings/sessions/${otherId}/revoke`, {}],
    ['/settings/sessions/revoke-all', {}],
    ['/settings/webhook-secret/rotate', {}],
  ];
  for (const [path, fields] of posts) {
    const res = await client.post(path, { ...fields, _csrf: '' });
    assert.equal(res.status, 403, path);
  }
  assert.ok(await canSignIn(b.url, PASSWORD), 'the password is unchanged');
  assert.equal((await other.get('/settings')).status, 200, 'the other session is still signed in');
  const again = await client.get('/settings');
  assert.equal(again.status, 200);
  assert.ok(again.html.includes(secret!), 'the secret is unchanged');
});
