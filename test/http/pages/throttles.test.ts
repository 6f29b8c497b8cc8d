import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ARGON2_HASHER, type PasswordHasher } from '../../../src/domain/accounts/passwords.js';
import { HASHES_IN_FLIGHT_PER_CLIENT, LOGIN_LIMITS } from '../../../src/http/pages/throttle.js';
import { build } from '../../helpers/build.js';
import { PASSWORD, PageClient, setPassword } from './browserless.js';

/** Every attempt in one minute, whatever the wall clock does. */
const AT = new Date('2026-06-01T12:00:05Z');
/** The trusted proxy the tests' requests come through: X-Forwarded-For names the client. */
const PROXIED = { NETDIAG_TRUST_PROXY: '127.0.0.1' };
/** The n-th address of one IPv6 /64: a client that takes a new address for every attempt. */
const inOne64 = (n: number) => ({ 'x-forwarded-for': `2001:db8:1:2:${(n + 1).toString(16)}::${n + 7}` });

test('dashboard: sign-in attempts from one IPv6 /64 are throttled together, whatever address of it each comes from', async (t) => {
  const b = await build(t, { env: PROXIED, deps: { clock: () => AT } });
  const c = new PageClient(b.url);
  await c.get('/login');
  const statuses: number[] = [];
  // A new e-mail each time, so that only the per-address throttle can refuse.
  for (let i = 0; i < 30; i++) statuses.push((await c.post('/login', { email: `guess${i}@example.com`, password: 'wrong password' }, inOne64(i))).status);
  assert.equal(statuses.filter((s) => s === 401).length, LOGIN_LIMITS.perAddress.minute, statuses.join(' '));
  assert.equal(statuses.filter((s) => s === 429).length, 30 - LOGIN_LIMITS.perAddress.minute);
  // Another /64 is another client.
  const other = await c.post('/login', { email: 'guess-other@example.com', password: 'wrong password' }, { 'x-forwarded-for': '2001:db8:1:3::1' });
  assert.equal(other.status, 401);
});

test('dashboard: sign-ups and one-time-link forms from one IPv6 /64 are throttled together', async (t) => {
  const b = await build(t, { env: { ...PROXIED, NETDIAG_SIGNUP: 'open' }, deps: { clock: () => AT } });
  const c = new PageClient(b.url);
  await c.get('/signup');
  let made = 0;
  for (let i = 0; i < 12; i++) {
    const res = await c.post('/signup', { name: 'N', email: `n${i}@example.com`, password: PASSWORD, confirm: PASSWORD }, inOne64(i));
    if (res.status === 303) {
      made++;
      c.cookies.clear();
      await c.get('/signup');
    } else assert.equal(res.status, 429, `sign-up ${i + 1}: ${res.status}`);
  }
  assert.equal(made, LOGIN_LIMITS.signupPerAddress.minute, 'accounts made from one /64');

  const link = new PageClient(b.url);
  await link.get('/login');
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await link.post('/set-password', { token: 'A'.repeat(43), password: PASSWORD, confirm: PASSWORD }, inOne64(i))).status);
  assert.equal(statuses.filter((s) => s === 429).length, 8 - LOGIN_LIMITS.signupPerAddress.minute, statuses.join(' '));
});

test('dashboard: a next that is not a plain local path is ignored (back to the overview), never a 500', async (t) => {
  const b = await build(t);
  await setPassword(b.store, 'tester@example.com', PASSWORD);
  const c = new PageClient(b.url);
  await c.signIn('tester@example.com', PASSWORD);
  const cases: Array<[string, string]> = [
    ['/%C4%80', '/'],
    ['/tokens%C4%80', '/'],
    ['/%FF', '/%FF'],
    ['/a%0D%0ASet-Cookie:x=1', '/'],
    ['//evil.example', '/'],
    ['/%5Cevil.example', '/'],
    ['https://evil.example/', '/'],
    ['/tokens?x=%25C4%2580', '/tokens?x=%C4%80'],
    ['/settings', '/settings'],
  ];
  for (const [next, to] of cases) {
    const res = await c.get(`/login?next=${next}`);
    assert.equal(res.status, 303, `next=${next}: ${res.status}`);
    assert.equal(res.headers.get('location'), to, `next=${next}`);
  }
  // The form's own next, after a sign-in, the same way.
  await c.get('/login');
  for (const [next, to] of [['/\u0100', '/'], ['/a\u2028b', '/'], ['/ok', '/ok']]) {
    const fresh = new PageClient(b.url);
    await fresh.get('/login');
    const res = await fresh.post('/login', { email: 'tester@example.com', password: PASSWORD, next: next! });
    assert.equal(res.status, 303, `posted next=${JSON.stringify(next)}`);
    assert.equal(res.headers.get('location'), to);
  }
  // A page id that no header can carry is a 404 page, not a 500.
  const cancel = await c.post('/jobs/%ED%A0%80/cancel', {});
  assert.ok(cancel.status < 500, `cancel of a non-id: ${cancel.status}`);
});

/** A hasher that counts the checks of `held` and holds them until released; any other password is really checked. */
function holdingHasher(held: string, onHold: () => void) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const spy = {
    heldChecks: 0,
    release,
    hasher: {
      hash: (password: string) => ARGON2_HASHER.hash(password),
      verify: async (phc: string, password: string) => {
        if (password !== held) return ARGON2_HASHER.verify(phc, password);
        spy.heldChecks++;
        onHold();
        await released;
        return false;
      },
    } satisfies PasswordHasher,
  };
  return spy;
}

test('dashboard: one client\'s parallel sign-ins hash at most HASHES_IN_FLIGHT_PER_CLIENT passwords at once; the rest are 429s at once, and another client signs in meanwhile', async (t) => {
  const PARALLEL = 20;
  let answered = 0;
  // Every attempt is either answered or held in the hasher: then nothing more happens until the release.
  let quiet!: () => void;
  const allPlaced = new Promise<void>((resolve) => (quiet = resolve));
  const check = () => {
    if (answered + spy.heldChecks === PARALLEL) quiet();
  };
  const spy = holdingHasher('spray', check);
  t.after(spy.release);
  const b = await build(t, { env: PROXIED, deps: { hasher: spy.hasher } });
  await setPassword(b.store, 'tester@example.com', PASSWORD);
  const sprayer = new PageClient(b.url);
  await sprayer.get('/login');
  const sprays = Array.from({ length: PARALLEL }, (_, i) =>
    sprayer.post('/login', { email: `guess${i}@example.com`, password: 'spray' }, { 'x-forwarded-for': '203.0.113.5' }).then((res) => {
      answered++;
      check();
      return res;
    }),
  );
  await allPlaced;
  assert.equal(spy.heldChecks, HASHES_IN_FLIGHT_PER_CLIENT, 'hashes started for the sprayer');
  const owner = new PageClient(b.url);
  await owner.get('/login', { 'x-forwarded-for': '198.51.100.7' });
  const ok = await owner.post('/login', { email: 'tester@example.com', password: PASSWORD }, { 'x-forwarded-for': '198.51.100.7' });
  assert.equal(ok.status, 303, 'another client signs in while the sprayer holds its share');
  spy.release();
  const answers = await Promise.all(sprays);
  const refused = answers.filter((r) => r.status === 429);
  assert.equal(refused.length, PARALLEL - HASHES_IN_FLIGHT_PER_CLIENT);
  assert.equal(answers.filter((r) => r.status === 401).length, HASHES_IN_FLIGHT_PER_CLIENT);
  for (const r of refused) assert.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After on each refusal');
  assert.equal(spy.heldChecks, HASHES_IN_FLIGHT_PER_CLIENT, 'no refused attempt was hashed');
});
