import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../../helpers/build.js';
import { PageClient, PASSWORD, setPassword } from './browserless.js';

const TOKEN = /nd_[0-9A-Za-z]{40}/;
const DAY_MS = 86_400_000;

async function signedIn(t: import('node:test').TestContext) {
  const b = await build(t);
  await setPassword(b.store, 'tester@example.com', PASSWORD);
  const client = new PageClient(b.url);
  await client.signIn('tester@example.com', PASSWORD);
  return { b, client };
}

test('tokens page: a new token is shown once, with a curl line, and works on the API', async (t) => {
  const { b, client } = await signedIn(t);
  const page = await client.get('/tokens');
  assert.equal(page.status, 200);
  assert.match(page.html, /<h1>API tokens<\/h1>/);
  assert.match(page.html, /aria-current="page">Tokens/);

  const res = await client.submit('/tokens', { label: 'monitoring <script>', expiry: 'never' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const token = TOKEN.exec(res.html)?.[0];
  assert.ok(token, 'the answer shows the new token');
  assert.match(res.html, new RegExp(`<code id="new-token" class="secret">${token}</code>`));
  assert.match(res.html, /data-copy="new-token"/);
  assert.match(res.html, /will not be shown again/);
  assert.ok(res.html.includes(`curl -H &quot;Authorization: Bearer ${token}&quot; ${b.url}/api/user`), 'a ready curl line with this server');
  assert.ok(!res.html.includes('<script>'), 'the label is escaped');
  assert.ok(res.html.includes('monitoring &lt;script&gt;'));

  const api = await b.api('/api/user', { token });
  assert.equal(api.status, 200);

  const later = await client.get('/tokens');
  assert.ok(!later.html.includes(token), 'never shown again');
  assert.ok(later.html.includes(`${token.slice(0, 9)}…`), 'only its prefix');
  assert.ok(!TOKEN.test(later.html));
  assert.match(later.html, /<td data-label="Expires">never<\/td>/, 'never expires');
});

test('tokens page: the curl line names NETDIAG_PUBLIC_URL when it is set', async (t) => {
  const b = await build(t, { env: { NETDIAG_PUBLIC_URL: 'https://netdiag.example.com/' } });
  await setPassword(b.store, 'tester@example.com', PASSWORD);
  const client = new PageClient(b.url);
  await client.signIn('tester@example.com', PASSWORD);
  await client.get('/tokens');
  const res = await client.submit('/tokens', { label: '', expiry: '90' });
  assert.equal(res.status, 200);
  assert.match(res.html, /Bearer nd_[0-9A-Za-z]{40}&quot; https:\/\/netdiag\.example\.com\/api\/user/);
});

test('tokens page: a 30-day token lists its expiry date and the store has it 30 days ahead', async (t) => {
  const { b, client } = await signedIn(t);
  await client.get('/tokens');
  const before = Date.now();
  const res = await client.submit('/tokens', { label: 'short', expiry: '30' });
  assert.equal(res.status, 200);
  const account = await b.store.accounts.findByEmail('tester@example.com');
  const made = (await b.store.tokens.listByAccount(account!.id)).find((x) => x.label === 'short');
  assert.ok(made?.expires_at);
  const ahead = Date.parse(made.expires_at) - before;
  assert.ok(Math.abs(ahead - 30 * DAY_MS) < 60_000, `expires ${made.expires_at}`);
  const date = made.expires_at.slice(0, 10);
  const list = await client.get('/tokens');
  assert.ok(list.html.includes(`<time datetime="${made.expires_at}">${date}</time>`), 'the list shows the date');
  assert.match(res.html, new RegExp(`It expires on ${date}`));
});

test('tokens page: revoking a token makes the API refuse it', async (t) => {
  const { b, client } = await signedIn(t);
  await client.get('/tokens');
  const res = await client.submit('/tokens', { label: 'to revoke', expiry: '365' });
  const token = TOKEN.exec(res.html)![0];
  assert.equal((await b.api('/api/user', { token })).status, 200);
  const id = /action="\/tokens\/(\d+)\/revoke"/.exec(res.html.slice(res.html.indexOf('to revoke</th>')))?.[1];
  assert.ok(id);
  const revoked = await client.post(`/tokens/${id}/revoke`, {});
  assert.equal(revoked.status, 303);
  assert.equal(revoked.headers.get('location'), `/tokens?revoked=${id}`);
  assert.equal((await b.api('/api/user', { token })).status, 401);
  const after = await client.get(revoked.headers.get('location')!);
  assert.match(after.html, /is revoked/);
  assert.match(after.html, /status-revoked">revoked/);
  assert.ok(!after.html.includes(`action="/tokens/${id}/revoke"`), 'no revoke button for a revoked token');
});

test("tokens page: another account's token id is a 404 and that token keeps working", async (t) => {
  const { b, client } = await signedIn(t);
  const other = await b.accounts.createAccount({ email: 'other@example.com', name: 'Other', plan: 'free' });
  await client.get('/tokens');
  const res = await client.post(`/tokens/${other.tokenId}/revoke`, {});
  assert.equal(res.status, 404);
  assert.match(res.html, /No such token/);
  assert.equal((await b.api('/api/user', { token: other.token })).status, 200);
  const stored = await b.store.tokens.findById(other.tokenId);
  assert.equal(stored?.revoked_at, null);
  for (const bad of ['abc', '0', '-1', '1e3', '99999999999999999999']) {
    const r = await client.post(`/tokens/${bad}/revoke`, {});
    assert.equal(r.status, 404, bad);
  }
});

test('tokens page: a post without the CSRF token is refused and makes no token', async (t) => {
  const { b, client } = await signedIn(t);
  await client.get('/tokens');
  const account = await b.store.accounts.findByEmail('tester@example.com');
  const count = (await b.store.tokens.listByAccount(account!.id)).length;
  const res = await client.post('/tokens', { _csrf: '', label: 'csrf', expiry: 'never' });
  assert.equal(res.status, 403);
  assert.ok(!TOKEN.test(res.html));
  const wrong = await client.post('/tokens', { _csrf: 'not-the-token', label: 'csrf', expiry: 'never' });
  assert.equal(wrong.status, 403);
  assert.equal((await b.store.tokens.listByAccount(account!.id)).length, count);
  const ids = (await b.store.tokens.listByAccount(account!.id)).map((x) => x.id);
  const revoke = await client.post(`/tokens/${ids[0]}/revoke`, { _csrf: '' });
  assert.equal(revoke.status, 403);
  assert.equal((await b.api('/api/user')).status, 200, 'the test token is not revoked');
});

test('tokens page: not signed in redirects to the login', async (t) => {
  const b = await build(t);
  const client = new PageClient(b.url);
  const res = await client.get('/tokens');
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/login?next=%2Ftokens');
  const post = await client.post('/tokens', { label: 'x', expiry: 'never' });
  assert.equal(post.status, 303);
  assert.match(post.headers.get('location') ?? '', /^\/login/);
  const bearer = await client.get('/tokens', { authorization: `Bearer ${b.token}` });
  assert.equal(bearer.status, 303, 'a bearer token does not open a page');
});

test('tokens page: a label over 200 characters or an unknown expiry is the form again with an error', async (t) => {
  const { b, client } = await signedIn(t);
  await client.get('/tokens');
  const account = await b.store.accounts.findByEmail('tester@example.com');
  const count = (await b.store.tokens.listByAccount(account!.id)).length;
  const long = 'x'.repeat(201);
  const res = await client.post('/tokens', { label: long, expiry: '30' });
  assert.equal(res.status, 400);
  assert.match(res.html, /role="alert">Label: must be at most 200 characters/);
  assert.match(res.html, /<form class="stack" method="post" action="\/tokens">/);
  assert.ok(!TOKEN.test(res.html));
  const exact = await client.submit('/tokens', { label: 'y'.repeat(200), expiry: '30' });
  assert.equal(exact.status, 200, '200 characters are fine');
  for (const expiry of ['7', '', 'forever', '3650']) {
    const bad = await client.post('/tokens', { label: 'z', expiry });
    assert.equal(bad.status, 400, expiry);
    assert.match(bad.html, /Expiry: choose 30, 90 or 365 days, or never/);
  }
  assert.equal((await b.store.tokens.listByAccount(account!.id)).length, count + 1);
});

test('tokens page: ?welcome=1 greets a new account', async (t) => {
  const { client } = await signedIn(t);
  const res = await client.get('/tokens?welcome=1');
  assert.match(res.html, /Welcome to netdiag/);
  assert.match(res.html, /Create your first API token/);
  const plain = await client.get('/tokens');
  assert.ok(!plain.html.includes('Welcome to netdiag'));
});
