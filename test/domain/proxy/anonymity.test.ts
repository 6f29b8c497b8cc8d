import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressesIn, judgeAnonymity, type JudgeEcho } from '../../../src/domain/proxy/index.js';

const OURS = new Set(['203.0.113.7', '2001:db8::7']);
const EXIT = '198.51.100.9';
const BASE: Array<[string, string]> = [
  ['Host', '203.0.113.7:8080'],
  ['User-Agent', 'netdiag-proxy-check/1.0'],
  ['Accept', 'application/json'],
  ['Connection', 'keep-alive'],
];
const echo = (extra: Array<[string, string]>, remote = EXIT): JudgeEcho => ({ nonce: 'n', remote_address: remote, method: 'GET', headers: [...BASE, ...extra] });

test('transparent: our address in any header, in any spelling, or as the peer', () => {
  const leaks: Array<[string, string]> = [
    ['X-Forwarded-For', '203.0.113.7'],
    ['X-Forwarded-For', '10.0.0.1, 203.0.113.7'],
    ['Forwarded', 'for=203.0.113.7;proto=http;by=198.51.100.9'],
    ['Forwarded', 'for="[2001:db8::7]:4711"'],
    ['X-Real-IP', '::ffff:203.0.113.7'],
    ['Client-IP', '2001:0db8:0000:0000:0000:0000:0000:0007'],
    ['X-Some-Vendor-Header', 'client=203.0.113.7'],
  ];
  for (const header of leaks) {
    const v = judgeAnonymity(echo([header]), OURS);
    assert.equal(v.level, 'transparent', `${header[0]}: ${header[1]}`);
    assert.deepEqual(v.headers, [header[0]]);
  }
  assert.equal(judgeAnonymity(echo([], '::ffff:203.0.113.7'), OURS).level, 'transparent', 'the judge saw us as the peer');
});

test('anonymous: a header announces a proxy but carries none of our addresses', () => {
  for (const header of [
    ['Via', '1.1 squid'],
    ['X-Forwarded-For', '10.1.2.3'],
    ['X-Forwarded-For', '203.0.113.70'],
    ['Forwarded', 'for=unknown'],
    ['Proxy-Connection', 'keep-alive'],
    ['X-Forwarded-Proto', 'http'],
    ['X-Proxy-ID', '12345'],
    ['X-BlueCoat-Via', 'abc'],
  ] as Array<[string, string]>) {
    const v = judgeAnonymity(echo([header]), OURS);
    assert.equal(v.level, 'anonymous', `${header[0]}: ${header[1]}`);
    assert.deepEqual(v.headers, [header[0]]);
  }
});

test('elite: nothing reveals a proxy, even with our address in the Host header (the judge is ours)', () => {
  const v = judgeAnonymity(echo([['Cache-Control', 'max-age=0']]), OURS);
  assert.equal(v.level, 'elite');
  assert.deepEqual(v.headers, []);
});

test('our own address unknown: no verdict rather than a wrong one', () => {
  const v = judgeAnonymity(echo([['X-Forwarded-For', '203.0.113.7']]), new Set());
  assert.equal(v.level, null);
  assert.match(v.reason, /not known/);
});

test('addresses are read out of header values exactly, not as substrings', () => {
  assert.deepEqual(addressesIn('for=192.0.2.1, 203.0.113.70'), ['192.0.2.1', '203.0.113.70']);
  assert.deepEqual(addressesIn('for="[2001:db8::7]:4711"'), ['2001:db8::7']);
  assert.deepEqual(addressesIn('Mon, 01 Jan 2026 12:34:56 GMT'), []);
  assert.deepEqual(addressesIn('1.1 squid (v4.0)'), []);
  assert.deepEqual(addressesIn('::ffff:10.0.0.1'), ['10.0.0.1']);
});
