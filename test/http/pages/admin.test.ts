import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { FastifyRequest } from 'fastify';
import { linkBase as inviteBase } from '../../../src/http/pages/render.js';
import { build, type Built } from '../../helpers/build.js';
import { PageClient, PASSWORD, setPassword } from './browserless.js';

const INVITE_LINK = /<code id="invite-link" class="secret">([^<]*)<\/code>/;

/** The app with tester@example.com as a signed-in admin, and a member other@example.com with an API token. */
async function admin(t: TestContext, env: Record<string, string> = {}) {
  const b = await build(t, { env });
  const tester = await b.store.accounts.findByEmail('tester@example.com');
  await b.store.accounts.update(tester!.id, { is_admin: true });
  await setPassword(b.store, 'tester@example.com', PASSWORD);
  const other = await b.accounts.createAccount({ email: 'other@example.com', name: 'Other Person', plan: 'free' });
  await setPassword(b.store, 'other@example.com', PASSWORD);
  const client = new PageClient(b.url);
  await client.signIn('tester@example.com', PASSWORD);
  return { b, client, self: tester!, other: { ...other.account, token: other.token } };
}

/** What /api/user answers for a token: its status, and the plan or the error code. */
async function userPlan(b: Built, token: string): Promise<{ status: number; plan?: string; code?: string }> {
  const res = await b.api('/api/user', { token });
  const body = (await res.json()) as { data?: { plan: string }; error?: string };
  return { status: res.status, plan: body.data?.plan, code: body.error };
}

test('admin page: not signed in → 303 to /login; a non-admin gets 403 on the page and on every form', async (t) => {
  const { b, other } = await admin(t);
  const anon = new PageClient(b.url);
  const res = await anon.get('/admin');
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/login?next=%2Fadmin');
  const post = await anon.post(`/admin/accounts/${other.id}/plan`, { plan: 'pro' });
  assert.equal(post.status, 303);
  assert.match(post.headers.get('location') ?? '', /^\/login/);

  const member = new PageClient(b.url);
  await member.signIn('other@example.com', PASSWORD);
  const page = await member.get('/admin');
  assert.equal(page.status, 403);
  assert.match(page.html, /for administrators/);
  const home = await member.get('/login?next=/');
  assert.ok(!home.html.includes('href="/admin"'), 'no admin link in the nav for a member');
  for (const [path, fields] of [
    [`/admin/accounts/${other.id}/plan`, { plan: 'enterprise' }],
    [`/admin/accounts/${other.id}/status`, { status: 'active' }],
    ['/admin/accounts/1/status', { status: 'suspended' }],
    ['/admin/invitations', { email: '', plan: 'enterprise' }],
  ] as const) {
    await member.get('/login?next=/');
    const r = await member.post(path, fields);
    assert.equal(r.status, 403, path);
  }
  assert.equal((await b.store.accounts.findById(other.id))!.plan, 'free');
  assert.equal((await b.store.accounts.findByEmail('tester@example.com'))!.status, 'active');
  assert.equal((await b.store.authLinks.listInvites(10)).length, 0);
});

test('admin page: lists accounts, searches e-mail and name, escapes what it shows', async (t) => {
  const { b, client } = await admin(t);
  await b.accounts.register({ email: 'alice@corp.example', name: 'Alice <b>Ops</b>' });
  await b.accounts.register({ email: 'bob@home.example', name: 'Bob' });
  const all = await client.get('/admin');
  assert.equal(all.status, 200);
  assert.match(all.html, /<h1>Admin<\/h1>/);
  assert.match(all.html, /aria-current="page">Admin/);
  for (const email of ['tester@example.com', 'other@example.com', 'alice@corp.example', 'bob@home.example']) assert.ok(all.html.includes(email), email);
  assert.ok(all.html.includes('Alice &lt;b&gt;Ops&lt;/b&gt;'), 'names are escaped');
  assert.match(all.html, /admin <span class="muted">\(you\)<\/span>/);

  const byName = await client.get('/admin?q=ALICE');
  assert.ok(byName.html.includes('alice@corp.example'));
  for (const email of ['other@example.com', 'bob@home.example']) assert.ok(!byName.html.includes(email), `${email} is not a match`);
  assert.match(byName.html, /1 account matching/);
  const byDomain = await client.get('/admin?q=home.example');
  assert.ok(byDomain.html.includes('bob@home.example'));
  assert.ok(!byDomain.html.includes('alice@corp.example'));
  const none = await client.get(`/admin?q=${encodeURIComponent('%_<x>')}`);
  assert.equal(none.status, 200);
  assert.match(none.html, /No account's e-mail or name contains “%_&lt;x&gt;”/);
  const long = await client.get(`/admin?q=${'a'.repeat(5000)}`);
  assert.equal(long.status, 200);
  assert.ok(long.html.includes(`value="${'a'.repeat(200)}"`) && !long.html.includes('a'.repeat(201)), 'the search text is bounded to 200 characters');
});

test('admin page: a plan change reaches the API at once; bad plan, bad id, unknown id change nothing', async (t) => {
  const { b, client, other } = await admin(t);
  assert.deepEqual(await userPlan(b, other.token), { status: 200, plan: 'free', code: undefined });

  await client.get('/admin');
  const res = await client.submit(`/admin/accounts/${other.id}/plan`, { plan: 'pro', q: 'other' });
  assert.equal(res.status, 200);
  assert.match(res.html, /The account other@example\.com is now on the pro plan/);
  assert.match(res.html, /value="other"/, 'the search is kept');
  assert.equal((await userPlan(b, other.token)).plan, 'pro');

  const bad = await client.post(`/admin/accounts/${other.id}/plan`, { plan: 'platinum' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /role="alert">Plan: must be one of free, basic, pro, enterprise/);
  for (const id of ['0', '-1', 'abc', '1.5', '99999999999999999999', '1e3']) {
    const r = await client.post(`/admin/accounts/${encodeURIComponent(id)}/plan`, { plan: 'basic' });
    assert.equal(r.status, 404, id);
  }
  const unknown = await client.post('/admin/accounts/9999/plan', { plan: 'basic' });
  assert.equal(unknown.status, 404);
  assert.match(unknown.html, /There is no account with id 9999/);
  assert.equal((await userPlan(b, other.token)).plan, 'pro', 'nothing changed');

  const noCsrf = await client.post(`/admin/accounts/${other.id}/plan`, { plan: 'basic', _csrf: '' });
  assert.equal(noCsrf.status, 403);
  const noCsrfStatus = await client.post(`/admin/accounts/${other.id}/status`, { status: 'suspended', _csrf: 'forged' });
  assert.equal(noCsrfStatus.status, 403);
  await client.get('/admin');
  const noCsrfInvite = await client.post('/admin/invitations', { plan: 'pro', _csrf: '' });
  assert.equal(noCsrfInvite.status, 403);
  const stored = (await b.store.accounts.findById(other.id))!;
  assert.equal(stored.plan, 'pro');
  assert.equal(stored.status, 'active');
  assert.equal((await b.store.authLinks.listInvites(10)).length, 0);
});

test('admin page: suspend refuses the account on the API and on sign-in; resume lets it back; not oneself', async (t) => {
  const { b, client, self, other } = await admin(t);
  const member = new PageClient(b.url);
  await member.signIn('other@example.com', PASSWORD);
  assert.equal((await member.get('/login?next=/')).status, 303, 'signed in');

  const page = await client.get('/admin');
  assert.match(page.html, new RegExp(`data-confirm="Suspend other@example\\.com\\?`));
  const res = await client.submit(`/admin/accounts/${other.id}/status`, { status: 'suspended' });
  assert.equal(res.status, 200);
  assert.match(res.html, /The account other@example\.com is suspended/);
  assert.match(res.html, /Resume<span class="sr-only"> other@example\.com/);

  const api = await userPlan(b, other.token);
  assert.equal(api.status, 403);
  assert.equal(api.code, 'forbidden');
  const login = new PageClient(b.url);
  await login.get('/login');
  const refused = await login.post('/login', { email: 'other@example.com', password: PASSWORD });
  assert.equal(refused.status, 403);
  assert.match(refused.html, /suspended/);
  assert.equal((await member.get('/admin')).status, 303, 'its open session is over');

  const resumed = await client.submit(`/admin/accounts/${other.id}/status`, { status: 'active' });
  assert.equal(resumed.status, 200);
  assert.match(resumed.html, /The account other@example\.com is active again/);
  assert.equal((await userPlan(b, other.token)).status, 200);
  await login.signIn('other@example.com', PASSWORD);

  const badStatus = await client.post(`/admin/accounts/${other.id}/status`, { status: 'deleted' });
  assert.equal(badStatus.status, 400);
  assert.match(badStatus.html, /Status: must be one of active, suspended/);

  const own = await client.post(`/admin/accounts/${self.id}/status`, { status: 'suspended' });
  assert.equal(own.status, 400);
  assert.match(own.html, /you cannot suspend your own account/);
  assert.ok(!/Suspend<span class="sr-only"> tester@example\.com/.test(own.html), 'no suspend button for oneself');
  assert.equal((await b.store.accounts.findById(self.id))!.status, 'active');
  assert.equal((await b.api('/api/user')).status, 200);
  assert.equal((await client.get('/admin')).status, 200, 'still signed in');
});

test('admin page: an invitation link works end to end once, with its plan (NETDIAG_SIGNUP=invite)', async (t) => {
  const { b, client } = await admin(t, { NETDIAG_SIGNUP: 'invite' });
  const stranger = new PageClient(b.url);
  const closed = await stranger.get('/signup');
  assert.equal(closed.status, 403);
  assert.match(closed.html, /by invitation/);

  await client.get('/admin');
  const res = await client.submit('/admin/invitations', { email: '', plan: 'basic' });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const link = INVITE_LINK.exec(res.html)?.[1];
  assert.ok(link, 'the answer shows the link');
  assert.match(res.html, /<button type="button" data-copy="invite-link" hidden>Copy<\/button>/);
  assert.ok(link.startsWith(`${b.url}/signup?invite=`), `a link to this server: ${link}`);
  const secret = new URL(link).searchParams.get('invite')!;

  const later = await client.get('/admin');
  assert.ok(!later.html.includes(secret), 'the secret is never shown again');
  assert.match(later.html, /anyone with the link/);
  assert.match(later.html, /<td data-label="Plan">basic<\/td>/);
  assert.match(later.html, /not used yet/);

  const invited = new PageClient(b.url);
  const form = await invited.get(new URL(link).pathname + new URL(link).search);
  assert.equal(form.status, 200);
  assert.match(form.html, /to the <strong>basic<\/strong> plan/);
  const signUp = await invited.post('/signup', { invite: secret, name: 'New Person', email: 'new@example.com', password: PASSWORD, confirm: PASSWORD });
  assert.equal(signUp.status, 303, signUp.html.slice(0, 300));
  const home = await invited.get('/login');
  assert.equal(home.status, 303, 'signed in');
  const account = await b.store.accounts.findByEmail('new@example.com');
  assert.equal(account?.plan, 'basic');
  assert.equal(account?.is_admin, false);

  const again = new PageClient(b.url);
  assert.equal((await again.get(`/signup?invite=${secret}`)).status, 404);
  await again.get('/login');
  const twice = await again.post('/signup', { invite: secret, name: 'Second', email: 'second@example.com', password: PASSWORD, confirm: PASSWORD });
  assert.equal(twice.status, 403);
  assert.equal(await b.store.accounts.findByEmail('second@example.com'), undefined);
  const used = await client.get('/admin');
  assert.match(used.html, /used <time/);
});

test('admin page: an invitation naming an e-mail refuses another e-mail; bad invitation input is refused', async (t) => {
  const { b, client } = await admin(t, { NETDIAG_SIGNUP: 'closed', NETDIAG_PUBLIC_URL: 'https://netdiag.example.com/' });
  const stranger = new PageClient(b.url);
  const closed = await stranger.get('/signup');
  assert.equal(closed.status, 403);
  assert.match(closed.html, /closed/);

  await client.get('/admin');
  const bad = await client.post('/admin/invitations', { email: 'not an address', plan: 'pro' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /Email: must be an e-mail address/);
  assert.ok(!INVITE_LINK.test(bad.html));
  const badPlan = await client.post('/admin/invitations', { email: '', plan: 'gold' });
  assert.equal(badPlan.status, 400);
  assert.equal((await b.store.authLinks.listInvites(10)).length, 0);

  const res = await client.submit('/admin/invitations', { email: 'Named@Example.com', plan: 'pro' });
  assert.equal(res.status, 200);
  const link = INVITE_LINK.exec(res.html)?.[1];
  assert.ok(link?.startsWith('https://netdiag.example.com/signup?invite='), `NETDIAG_PUBLIC_URL is the base: ${link}`);
  assert.match(res.html, /only that address can use it/);
  const secret = new URL(link!).searchParams.get('invite')!;
  assert.match((await client.get('/admin')).html, /<td data-label="For">named@example\.com<\/td>/);

  const invited = new PageClient(b.url);
  const form = await invited.get(`/signup?invite=${secret}`);
  assert.equal(form.status, 200);
  assert.match(form.html, /value="named@example\.com" readonly/);
  const wrong = await invited.post('/signup', { invite: secret, name: 'Someone', email: 'someone@example.com', password: PASSWORD, confirm: PASSWORD });
  assert.equal(wrong.status, 400);
  assert.match(wrong.html, /this invitation is for named@example\.com/);
  assert.equal(await b.store.accounts.findByEmail('someone@example.com'), undefined);
  const right = await invited.post('/signup', { invite: secret, name: 'Named', email: 'named@example.com', password: PASSWORD, confirm: PASSWORD });
  assert.equal(right.status, 303);
  assert.equal((await b.store.accounts.findByEmail('named@example.com'))?.plan, 'pro');
});

test('admin page: with NETDIAG_SIGNUP=open anyone signs up without an invitation', async (t) => {
  const b = await build(t, { env: { NETDIAG_SIGNUP: 'open' } });
  const anyone = new PageClient(b.url);
  const form = await anyone.get('/signup');
  assert.equal(form.status, 200);
  const res = await anyone.post('/signup', { invite: '', name: 'Anyone', email: 'anyone@example.com', password: PASSWORD, confirm: PASSWORD });
  assert.equal(res.status, 303);
  assert.equal((await b.store.accounts.findByEmail('anyone@example.com'))?.plan, 'free');
  assert.equal((await anyone.get('/admin')).status, 403, 'a new account is no admin');
});

test('admin page: an invitation link is based on NETDIAG_PUBLIC_URL, else the address the admin used, never a wildcard', () => {
  const config = { publicUrl: undefined, port: 8080 } as unknown as Built['config'];
  const request = (host: string, protocol = 'http') => ({ host, protocol }) as unknown as FastifyRequest;
  assert.equal(inviteBase(request('netdiag.lan:3000'), config), 'http://netdiag.lan:3000');
  assert.equal(inviteBase(request('[2001:db8::1]:3000', 'https'), config), 'https://[2001:db8::1]:3000');
  assert.equal(inviteBase(request('0.0.0.0:3000'), config), 'http://localhost:8080');
  assert.equal(inviteBase(request('[::]:3000'), config), 'http://localhost:8080');
  const set = { ...config, publicUrl: 'https://diag.example.com/' } as Built['config'];
  assert.equal(inviteBase(request('0.0.0.0:3000'), set), 'https://diag.example.com');
});

test('admin page: suspending an account cancels its queued job at once, with the 403 body as its error', async (t) => {
  // No workers: the job stays queued until the suspension reaches it.
  const { b, client, other } = await admin(t, { NETDIAG_WORKERS: '0' });
  const created = await b.api('/api/ipv6/expand', { token: other.token, headers: { prefer: 'respond-async' }, json: { ipv6: '::1' } });
  assert.equal(created.status, 202);
  const { data: job } = (await created.json()) as { data: { id: string } };
  assert.equal((await b.store.jobs.find(job.id))?.status, 'queued');

  await client.get('/admin');
  const res = await client.submit(`/admin/accounts/${other.id}/status`, { status: 'suspended' });
  assert.equal(res.status, 200);
  const row = await b.store.jobs.find(job.id);
  assert.equal(row?.status, 'cancelled');
  const refusal = (await (await b.api('/api/user', { token: other.token })).json()) as { error: string; message: string };
  const error = JSON.parse(String(row?.error)) as { success: boolean; error: string; message: string };
  assert.deepEqual({ error: error.error, message: error.message }, { error: refusal.error, message: refusal.message });
  assert.equal(error.error, 'forbidden');
});
