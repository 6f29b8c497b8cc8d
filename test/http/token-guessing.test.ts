import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../helpers/build.js';

const guess = (i: number): string => `Bearer nd_${String(i).padStart(40, 'x')}`;

test('an address that has spent its anonymous budget on bad tokens gets 429s for its guesses; malformed ones cost no lookup', async (t) => {
  const b = await build(t);
  let lookups = 0;
  const findByHash = b.store.tokens.findByHash.bind(b.store.tokens);
  b.store.tokens.findByHash = (hash) => {
    lookups++;
    return findByHash(hash);
  };
  // The account's own token, used once: this process knows it from now on.
  assert.equal((await b.api('/api/user')).status, 200);
  assert.equal(lookups, 1);
  lookups = 0;
  // The free plan's minute: 10 guesses are looked up and refused (401)...
  const first = [];
  for (let i = 0; i < 10; i++) first.push((await b.api('/api/user', { headers: { authorization: guess(i) } })).status);
  assert.deepEqual(first, Array(10).fill(401));
  assert.equal(lookups, 10);
  // ...then the address is limited, and the next 50 guesses are 429s. Each well-formed one is
  // looked up (docs/security.md: a valid token is never refused by what its address spent without one).
  for (let i = 10; i < 60; i++) {
    const res = await b.api('/api/user', { headers: { authorization: guess(i) } });
    assert.equal(res.status, 429);
    const body = (await res.json()) as { error: string; details: { window: string } };
    assert.equal(body.error, 'rate_limit_exceeded');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
  }
  assert.equal(lookups, 60, 'one lookup by hash per well-formed guess');
  // A header that is no well-formed token is refused without a lookup.
  const malformed = await b.api('/api/user', { headers: { authorization: 'Bearer not-a-token' } });
  assert.equal(malformed.status, 429);
  assert.equal(lookups, 60);
  // A token this process already knows is still answered from the same address.
  const known = await b.api('/api/user');
  assert.equal(known.status, 200);
});

test('an unknown token sent again costs no lookup; the address is limited by minute, hour and day; a valid token still passes', async (t) => {
  const b = await build(t);
  let lookups = 0;
  const findByHash = b.store.tokens.findByHash.bind(b.store.tokens);
  b.store.tokens.findByHash = (hash) => {
    lookups++;
    return findByHash(hash);
  };
  const stale = guess(1);
  const statuses: number[] = [];
  // One token, in two spellings of the header: looked up once, refused from memory since.
  for (let i = 0; i < 12; i++) {
    const res = await b.api('/api/user', { headers: { authorization: i % 2 ? stale : stale.replace('Bearer ', 'bearer   ') } });
    statuses.push(res.status);
    // The anonymous limiter is the free plan's three windows, not only its minute.
    assert.equal(res.headers.get('ratelimit-policy'), '10;w=60, 100;w=3600, 500;w=86400');
  }
  assert.deepEqual(statuses, [...Array(10).fill(401), 429, 429]);
  assert.equal(lookups, 1, 'the unknown token was read once');
  // A token made now, never seen by this process, is admitted from the limited address.
  const { token } = await b.accounts.createToken('tester@example.com', 'new');
  assert.equal((await b.api('/api/user', { token })).status, 200);
});

test('guesses from every address of one IPv6 /64 share one budget; another /64 has its own', async (t) => {
  const b = await build(t);
  const from = async (remoteAddress: string, i: number): Promise<number> =>
    (await b.app.inject({ method: 'GET', url: '/api/user', remoteAddress, headers: { authorization: guess(i) } })).statusCode;
  const statuses: number[] = [];
  // A client that takes a new address of its /64 for every guess.
  for (let i = 0; i < 11; i++) statuses.push(await from(`2001:db8:1:2::${(i + 1).toString(16)}`, i));
  assert.deepEqual(statuses, [...Array(10).fill(401), 429]);
  assert.equal(await from('2001:db8:1:2:ffff:ffff:ffff:ffff', 11), 429);
  assert.equal(await from('2001:db8:1:3::1', 12), 401, 'the next /64 is another client');
});
