import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressesIn, judgeAnonymity, type JudgeEcho } from '../../src/domain/proxy/index.js';
import { MAX_ECHO_BYTES } from '../../src/domain/proxy/defaults.js';

/**
 * Issue 14: the judge's echo reaches us through the proxy under check, which may write anything
 * into it. Header values as large as an echo can be (MAX_ECHO_BYTES), built to hurt the old
 * IPv6 candidate regex (a hex run with fewer than two colons made it try every start: 60 KB
 * stalled the event loop for seconds), must give the right addresses, and a leak hidden behind
 * them must still be found. (The time is measured by bench/hostile-peers.ts.)
 */

const SIZE = MAX_ECHO_BYTES;
const OURS = new Set(['203.0.113.7', '2001:db8::7']);
const echo = (headers: Array<[string, string]>): JudgeEcho => ({ nonce: 'n', remote_address: '198.51.100.9', method: 'GET', headers });

test('64 KiB of hex, of colons, of "1:": no address', () => {
  assert.deepEqual(addressesIn('0'.repeat(SIZE)), []);
  assert.deepEqual(addressesIn(`:${'f'.repeat(SIZE - 1)}`), []);
  assert.deepEqual(addressesIn(`${'a'.repeat(SIZE / 2)}:${'b'.repeat(SIZE / 2 - 1)}`), []);
  assert.deepEqual(addressesIn(':'.repeat(SIZE)), []);
  assert.deepEqual(addressesIn('1:'.repeat(SIZE / 2)), []);
  assert.deepEqual(addressesIn('f'.repeat(SIZE - 3) + '::1'), []);
  assert.deepEqual(addressesIn('::'.repeat(SIZE / 2)), []);
  assert.deepEqual(addressesIn(':.'.repeat(SIZE / 2)), []);
});

test('64 KiB of "1.1.1." is one address, found once', () => {
  assert.deepEqual(addressesIn('1.1.1.'.repeat(Math.floor(SIZE / 6))), ['1.1.1.1']);
  assert.deepEqual(addressesIn('1.'.repeat(SIZE / 2)), ['1.1.1.1']);
});

test('thousands of distinct addresses in one value are all found', () => {
  const many: string[] = [];
  for (let i = 1; many.join(', ').length < SIZE - 32; i++) many.push(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, `2001:db8::${i.toString(16)}`);
  const found = new Set(addressesIn(many.join(', ')));
  assert.equal(found.size, many.length);
  for (const a of many) assert.ok(found.has(a), a);
});

test('a leak behind 60 KB of junk is still a leak', () => {
  for (const junk of ['0'.repeat(60_000), `:${'f'.repeat(60_000)}`, ':'.repeat(60_000), '1:'.repeat(30_000), '1.1.1.'.repeat(10_000), ' '.repeat(60_000), 'a:'.repeat(30_000) + '.']) {
    for (const ours of OURS) {
      const value = `${junk} ${ours}`;
      assert.ok(addressesIn(value).includes(ours), `${ours} after ${JSON.stringify(junk.slice(0, 8))}…`);
      const verdict = judgeAnonymity(echo([['X-Forwarded-For', value]]), OURS);
      assert.equal(verdict.level, 'transparent');
      assert.deepEqual(verdict.headers, ['X-Forwarded-For']);
    }
  }
});

test('an echo of 64 KiB hostile headers: the verdict stands on what they really say', () => {
  const headers: Array<[string, string]> = [
    ['Host', 'judge.example'],
    ['X-Junk-Hex', '0'.repeat(16 * 1024)],
    ['X-Junk-Colons', ':'.repeat(16 * 1024)],
    ['X-Junk-Ones', '1:'.repeat(8 * 1024)],
    ['X-Junk-Dots', '1.1.1.'.repeat(2 * 1024)],
    ['Via', '1.1 hostile' + ' '.repeat(16 * 1024)],
  ];
  const verdict = judgeAnonymity(echo(headers), OURS);
  assert.equal(verdict.level, 'anonymous');
  assert.deepEqual(verdict.headers, ['Via']);
});
