import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../helpers/build.js';

const guess = (i: number): string => `Bearer nd_${String(i).padStart(40, 'x')}`;

test('an address that has spent its anonymous budget on bad tokens costs the store no more lookups', async (t) => {
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
  // ...then the address is limited, and the next 50 guesses are 429s that never reach the store.
  for (let i = 10; i < 60; i++) {
    const res = await b.api('/api/user', { headers: { authorization: guess(i) } });
    assert.equal(res.status, 429);
    const body = (await res.json()) as { error: string; details: { window: string } };
    assert.equal(body.error, 'rate_limit_exceeded');
    assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
  }
  assert.equal(lookups, 10, 'no lookup for a guess from a limited address');
  // A token this process already knows is still answered from the same address.
  const known = await b.api('/api/user');
  assert.equal(known.status, 200);
});
