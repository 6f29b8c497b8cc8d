import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../../helpers/build.js';
import { PASSWORD, PageClient, setPassword } from './browserless.js';

const EMAIL = 'tester@example.com';

/** Every Set-Cookie line of a response, by cookie name. */
function setCookies(res: Response): Map<string, string> {
  return new Map(res.headers.getSetCookie().map((line) => [line.slice(0, line.indexOf('=')), line]));
}

test('dashboard over HTTPS: every cookie is Secure, and the session and CSRF cookies are __Host- (path /, no Domain)', async (t) => {
  const b = await build(t, { env: { NETDIAG_TRUST_PROXY: '127.0.0.1' } });
  await setPassword(b.store, EMAIL, PASSWORD);
  // Behind a trusted TLS-terminating proxy: the browser's origin is https.
  const https = { 'x-forwarded-proto': 'https', origin: b.url.replace('http:', 'https:') };
  const c = new PageClient(b.url);
  const page = await c.get('/login', https);
  const seen = [...setCookies(page)];
  const login = await c.post('/login', { email: EMAIL, password: PASSWORD }, https);
  assert.equal(login.status, 303, login.html.slice(0, 300));
  seen.push(...setCookies(login));
  const tokens = await c.get('/tokens', https);
  assert.equal(tokens.status, 200);
  seen.push(...setCookies(tokens));
  const names = new Set(seen.map(([name]) => name));
  assert.ok(names.has('__Host-netdiag_csrf'), `the CSRF cookie is __Host-: ${[...names].join(', ')}`);
  assert.ok(names.has('__Host-netdiag_session'), 'the session cookie is __Host-');
  assert.ok(!names.has('_csrf') || seen.filter(([n]) => n === '_csrf').every(([, l]) => /Max-Age=0/i.test(l)), 'no plain _csrf cookie is set over HTTPS');
  for (const [name, line] of seen) {
    assert.match(line, /;\s*Secure/i, `${name} over HTTPS: ${line}`);
    if (name.startsWith('__Host-')) {
      assert.match(line, /;\s*Path=\/(;|$)/, line);
      assert.doesNotMatch(line, /Domain=/i, line);
    }
  }
  // A plain (non-Secure) CSRF cookie planted by someone on plain HTTP is no secret over HTTPS.
  const planted = new PageClient(b.url);
  await planted.get('/login');
  const plain = planted.cookies.get('_csrf');
  assert.ok(plain, 'over plain HTTP the CSRF cookie is _csrf, as before');
  const res = await planted.post('/login', { email: EMAIL, password: PASSWORD }, https);
  assert.equal(res.status, 403, 'the form token of a plain-HTTP cookie is refused over HTTPS');
});

test('dashboard over plain HTTP: cookies are not Secure and keep their plain names', async (t) => {
  const b = await build(t);
  await setPassword(b.store, EMAIL, PASSWORD);
  const c = new PageClient(b.url);
  const page = await c.get('/login');
  const csrf = setCookies(page).get('_csrf');
  assert.ok(csrf);
  assert.doesNotMatch(csrf, /Secure/i);
  const login = await c.post('/login', { email: EMAIL, password: PASSWORD });
  assert.equal(login.status, 303);
  for (const [name, line] of setCookies(login)) {
    assert.doesNotMatch(line, /Secure/i, `${name}: ${line}`);
    assert.ok(!name.startsWith('__Host-'), name);
  }
  assert.equal((await c.get('/')).status, 200);
});
