import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TOKEN_PATTERN, TOKEN_RANDOM_LENGTH, generateToken, hashToken, tokenPrefix } from '../../../src/domain/accounts/tokens.js';

test('tokens are nd_ + base62 from the CSPRNG, never repeating', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const token = generateToken();
    assert.match(token, /^nd_[0-9A-Za-z]+$/);
    assert.equal(token.length, 3 + TOKEN_RANDOM_LENGTH);
    assert.ok(TOKEN_RANDOM_LENGTH >= 32);
    assert.match(token, TOKEN_PATTERN);
    assert.ok(!seen.has(token));
    seen.add(token);
  }
});

test('every base62 character turns up, roughly evenly (no modulo bias towards the first ones)', () => {
  const counts = new Map<string, number>();
  for (let i = 0; i < 2000; i++) for (const c of generateToken().slice(3)) counts.set(c, (counts.get(c) ?? 0) + 1);
  assert.equal(counts.size, 62);
  const expected = (2000 * TOKEN_RANDOM_LENGTH) / 62;
  for (const [c, n] of counts) assert.ok(Math.abs(n - expected) < expected * 0.2, `${c} appeared ${n} times, expected about ${expected}`);
});

test('the stored form is the SHA-256 hex digest', () => {
  // FIPS 180-2's test vector for "abc".
  assert.equal(hashToken('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.match(hashToken(generateToken()), /^[0-9a-f]{64}$/);
  assert.notEqual(hashToken('nd_a'), hashToken('nd_b'));
});

test("a token's prefix is nd_ and its first 6 characters: what lists show to tell tokens apart", () => {
  assert.equal(tokenPrefix('nd_AbC123xyzxyzxyzxyzxyzxyzxyzxyzxyzxyzxyz'), 'nd_AbC123');
  const token = generateToken();
  assert.ok(token.startsWith(tokenPrefix(token)));
  assert.equal(tokenPrefix(token).length, 9);
});
