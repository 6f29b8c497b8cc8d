import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hash } from '@node-rs/argon2';
import { composeApp } from '../../../src/compose-app.js';
import { loadConfig } from '../../../src/config.js';
import { AccountService } from '../../../src/domain/accounts/service.js';
import { LoginService } from '../../../src/domain/accounts/logins.js';
import { ARGON2_PARAMS } from '../../../src/domain/accounts/passwords.js';
import { LOGIN_LIMITS } from '../../../src/http/pages/throttle.js';
import { TEST_DATABASE_URL, postgresBackend } from '../../infra/store/backends.js';
import { build } from '../../helpers/build.js';
import { PASSWORD, PageClient, setPassword } from './browserless.js';

const EMAIL = 'tester@example.com';

test('dashboard: a form post without the CSRF token, with a wrong one, or from another origin is refused and changes nothing', async (t) => {
  const b = await build(t);
  await setPassword(b.store, EMAIL, PASSWORD);
  const c = new PageClient(b.url);
  await c.get('/login');
  const noToken = await c.post('/login', { email: EMAIL, password: PASSWORD, _csrf: '' });
  assert.equal(noToken.status, 403);
  assert.match(noToken.html, /form has expired or did not come from this site/);
  assert.equal(c.cookies.has('netdiag_session'), false, 'no session without the token');
  const wrong = await c.post('/login', { email: EMAIL, password: PASSWORD, _csrf: 'x'.repeat(52) });
  assert.equal(wrong.status, 403);
  await c.get('/login');
  const foreign = await c.post('/login', { email: EMAIL, password: PASSWORD }, { origin: 'https://evil.example' });
  assert.equal(foreign.status, 403);
  assert.match(foreign.html, /sent from https:\/\/evil\.example/);
  const foreignReferer = await c.post('/login', { email: EMAIL, password: PASSWORD }, { origin: '', referer: 'https://evil.example/page' });
  assert.equal(foreignReferer.status, 403);
  assert.equal(c.cookies.has('netdiag_session'), false);

  // Signed in, a state-changing form without its token is refused too: the session survives.
  await c.signIn(EMAIL, PASSWORD);
  const logout = await c.post('/logout', { _csrf: '' });
  assert.equal(logout.status, 403);
  assert.equal((await c.get('/')).status, 200, 'still signed in: the logout without a token did nothing');
});

test('dashboard: the session cookie does not authenticate /api, and a bearer token does not authenticate a page', async (t) => {
  const b = await build(t);
  await setPassword(b.store, EMAIL, PASSWORD);
  const c = new PageClient(b.url);
  await c.signIn(EMAIL, PASSWORD);
  const cookie = [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const api = await fetch(`${b.url}/api/user`, { headers: { cookie } });
  assert.equal(api.status, 401);
  assert.equal(((await api.json()) as { error: string }).error, 'unauthorized');
  const page = await fetch(`${b.url}/`, { redirect: 'manual', headers: { authorization: `Bearer ${b.token}` } });
  assert.equal(page.status, 303);
  assert.equal(page.headers.get('location'), '/login?next=%2F');
  for (const path of ['/tokens', '/settings', '/admin']) {
    const res = await fetch(b.url + path, { redirect: 'manual', headers: { authorization: `Bearer ${b.token}` } });
    assert.equal(res.status, 303, `${path} with a bearer token only`);
  }
});

test('dashboard: the session cookie is HttpOnly and SameSite=Lax, new at every login, Secure and __Host- behind HTTPS; a forged cookie is nobody', async (t) => {
  const b = await build(t, { env: { NETDIAG_TRUST_PROXY: '127.0.0.1' } });
  await setPassword(b.store, EMAIL, PASSWORD);
  const login = async (headers: Record<string, string> = {}) => {
    const c = new PageClient(b.url);
    await c.get('/login', headers);
    const res = await c.post('/login', { email: EMAIL, password: PASSWORD }, headers);
    assert.equal(res.status, 303);
    return { res, c };
  };
  const plain = await login();
  const set = plain.res.headers.getSetCookie().find((l) => l.startsWith('netdiag_session='));
  assert.ok(set);
  assert.match(set, /HttpOnly/);
  assert.match(set, /SameSite=Lax/);
  assert.doesNotMatch(set, /Secure/);
  const again = await login();
  assert.notEqual(again.c.cookies.get('netdiag_session'), plain.c.cookies.get('netdiag_session'), 'every login makes a new session');

  // Behind a trusted TLS-terminating proxy: the browser's origin is https.
  const https = { 'x-forwarded-proto': 'https', origin: b.url.replace('http:', 'https:') };
  const secure = await login(https);
  const secureSet = secure.res.headers.getSetCookie().find((l) => l.startsWith('__Host-netdiag_session='));
  assert.ok(secureSet, 'the __Host- cookie over HTTPS');
  assert.match(secureSet, /Secure/);
  assert.match(secureSet, /Path=\//);
  assert.doesNotMatch(secureSet, /Domain=/);

  // A cookie the browser was given by someone else (fixation) or made up is no session.
  const forged = new PageClient(b.url);
  forged.cookies.set('netdiag_session', 'A'.repeat(43));
  const res = await forged.get('/');
  assert.equal(res.status, 303);
  assert.equal(forged.cookies.has('netdiag_session'), false, 'the unknown cookie is cleared');
});

test('dashboard: passwords are stored as Argon2id, and a hash made with older parameters is rehashed at login', async (t) => {
  const b = await build(t, { env: { NETDIAG_SIGNUP: 'open' } });
  const c = new PageClient(b.url);
  await c.get('/signup');
  const res = await c.post('/signup', { name: 'New', email: 'new@example.com', password: PASSWORD, confirm: PASSWORD });
  assert.equal(res.status, 303, res.html.slice(0, 400));
  const account = (await b.store.accounts.findByEmail('new@example.com'))!;
  const stored = await b.store.accounts.passwordHash(account.id);
  assert.match(stored!, new RegExp(`^\\$argon2id\\$v=19\\$m=${ARGON2_PARAMS.memoryCost},t=${ARGON2_PARAMS.timeCost},p=${ARGON2_PARAMS.parallelism}\\$`));
  assert.ok(!stored!.includes(PASSWORD));

  // An older, weaker hash still signs in, and is replaced by one with today's parameters.
  const old = await hash(PASSWORD, { ...ARGON2_PARAMS, memoryCost: 4096, timeCost: 1 });
  await b.store.accounts.setPasswordHash(account.id, old);
  await new PageClient(b.url).signIn('new@example.com', PASSWORD);
  const rehashed = await b.store.accounts.passwordHash(account.id);
  assert.notEqual(rehashed, old);
  assert.match(rehashed!, new RegExp(`m=${ARGON2_PARAMS.memoryCost},t=${ARGON2_PARAMS.timeCost}`));
});

test('dashboard: logins are throttled per e-mail and per address; the right password does not get past the throttle', async (t) => {
  // A fixed clock: every attempt falls in one minute, whatever the wall clock does.
  const at = new Date('2026-06-01T12:00:05Z');
  const b = await build(t, { deps: { clock: () => at } });
  await setPassword(b.store, EMAIL, PASSWORD);
  const c = new PageClient(b.url);
  await c.get('/login');
  for (let i = 0; i < LOGIN_LIMITS.perEmail.minute; i++) {
    const res = await c.post('/login', { email: EMAIL, password: 'wrong password' });
    assert.equal(res.status, 401, `attempt ${i + 1}`);
  }
  const limited = await c.post('/login', { email: EMAIL, password: PASSWORD });
  assert.equal(limited.status, 429);
  assert.match(limited.html, /Too many sign-in attempts/);
  assert.ok(Number(limited.headers.get('retry-after')) > 0);
  assert.equal(c.cookies.has('netdiag_session'), false);
  // Other e-mails from the same address go on until the address's own limit.
  const perAddress = LOGIN_LIMITS.perAddress.minute - LOGIN_LIMITS.perEmail.minute - 1;
  for (let i = 0; i < perAddress; i++) {
    assert.equal((await c.post('/login', { email: `other${i}@example.com`, password: 'x' })).status, 401);
  }
  assert.equal((await c.post('/login', { email: 'yet-another@example.com', password: 'x' })).status, 429, 'the address is limited too');
});

test('dashboard pages: strict CSP, no inline script or style, nothing from another origin', async (t) => {
  const b = await build(t, { env: { NETDIAG_SIGNUP: 'open' } });
  await setPassword(b.store, EMAIL, PASSWORD);
  const admin = (await b.store.accounts.findByEmail(EMAIL))!;
  await b.store.accounts.update(admin.id, { is_admin: true });
  const c = new PageClient(b.url);
  const link = await new LoginService(b.store, b.accounts, 'open').passwordLink(admin.id);
  const pages: Array<[string, PageClient]> = [
    ['/login', new PageClient(b.url)],
    ['/signup', new PageClient(b.url)],
    [`/set-password?token=${link}`, new PageClient(b.url)],
  ];
  await c.signIn(EMAIL, PASSWORD);
  for (const path of ['/', '/tokens', '/jobs', '/settings', '/admin']) pages.push([path, c]);
  for (const [path, client] of pages) {
    const res = await client.get(path);
    assert.equal(res.status, 200, path);
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/, path);
    assert.match(csp, /script-src 'self'/, path);
    assert.match(csp, /frame-ancestors 'none'/, path);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/, path);
    assert.equal(res.headers.get('referrer-policy'), 'same-origin', path);
    assert.equal(res.headers.get('x-frame-options'), 'DENY', path);
    // Every script has a src (no inline code), no element has a style attribute or an event handler.
    assert.doesNotMatch(res.html, /<script(?![^>]*\bsrc=)[^>]*>/i, `${path}: inline script`);
    assert.doesNotMatch(res.html, /\sstyle=/i, `${path}: style attribute`);
    assert.doesNotMatch(res.html, /\son[a-z]+=/i, `${path}: event handler attribute`);
    assert.doesNotMatch(res.html, /<style/i, `${path}: style element`);
    // Every resource and link is this site's: relative paths only, no scheme, no protocol-relative URL.
    for (const [, attr, value] of res.html.matchAll(/\s(src|href|action|srcset|poster|data)="([^"]*)"/gi)) {
      const ownPath = value!.startsWith('#') || (value!.startsWith('/') && !value!.startsWith('//'));
      assert.ok(ownPath, `${path}: ${attr}="${value}" is not a path of this site`);
    }
    for (const header of ['access-control-allow-origin', 'link', 'refresh']) assert.equal(res.headers.get(header), null, `${path}: ${header}`);
  }
});

if (!TEST_DATABASE_URL) {
  test('dashboard on PostgreSQL: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  test('dashboard on PostgreSQL: a session made on one instance works on another, and once revoked on one is refused by the other', async (t) => {
    const backend = postgresBackend(url);
    const storeA = await backend.open();
    const storeB = await backend.open();
    const config = loadConfig({ DATABASE_URL: url, NETDIAG_DNS_SERVERS: '127.0.0.1:1' });
    const appA = await composeApp({ config, store: storeA, logger: false });
    const appB = await composeApp({ config, store: storeB, logger: false });
    t.after(async () => {
      await appA.close();
      await appB.close();
      await storeA.close();
      await storeB.close();
      await backend.drop();
    });
    await appA.listen({ port: 0, host: '127.0.0.1' });
    await appB.listen({ port: 0, host: '127.0.0.1' });
    const base = (app: typeof appA) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
    await new AccountService(storeA).createAccount({ email: EMAIL, name: 'T' });
    await setPassword(storeA, EMAIL, PASSWORD);

    const onA = new PageClient(base(appA));
    await onA.signIn(EMAIL, PASSWORD);
    // The same browser, sent to the other instance by a load balancer.
    const onB = new PageClient(base(appB));
    for (const [k, v] of onA.cookies) onB.cookies.set(k, v);
    assert.equal((await onB.get('/')).status, 200, 'instance B knows the session made on A');
    await onA.get('/');
    assert.equal((await onA.post('/logout', {})).status, 303);
    const after = await onB.get('/');
    assert.equal(after.status, 303, 'instance B refuses the session revoked on A at the next request');
    assert.match(after.headers.get('location') ?? '', /^\/login/);
  });
}

test('dashboard: sign-up is throttled per address, and its 429 says when to come back (Retry-After), as the login\'s does', async (t) => {
  const at = new Date('2026-06-01T12:00:05Z');
  const b = await build(t, { env: { NETDIAG_SIGNUP: 'open' }, deps: { clock: () => at } });
  const c = new PageClient(b.url);
  await c.get('/signup');
  for (let i = 0; i < LOGIN_LIMITS.signupPerAddress.minute; i++) {
    const res = await c.post('/signup', { name: 'N', email: `n${i}@example.com`, password: PASSWORD, confirm: 'different' });
    assert.equal(res.status, 400, `attempt ${i + 1}`);
  }
  const limited = await c.post('/signup', { name: 'N', email: 'late@example.com', password: PASSWORD, confirm: PASSWORD });
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get('retry-after')) > 0, 'Retry-After on the throttled form');
  assert.equal(await b.store.accounts.findByEmail('late@example.com'), undefined);
});
