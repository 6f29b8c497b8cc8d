import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CheckedAddress } from '../../../src/domain/dialer.js';
import { mtrArgs, pingArgs, tracerouteArgs } from '../../../src/infra/path/index.js';

/** The programs' argument lists as docs/path-tools.md gives them; anything outside the bounds, or not a numeric address, runs nothing. */

const v4 = '192.0.2.1' as CheckedAddress;
const v6 = '2001:db8::1' as CheckedAddress;

test('the argument lists: options first, then --, then the numeric address', () => {
  assert.deepEqual(pingArgs({ address: v4, family: 4, packets: 4 }), ['-n', '-4', '-c', '4', '-i', '0.2', '-W', '2', '--', '192.0.2.1']);
  assert.deepEqual(tracerouteArgs({ address: v6, family: 6, protocol: 'icmp', port: 33_434, maxHops: 30, queries: 3 }), ['-n', '-6', '-I', '-q', '3', '-m', '30', '-w', '3', '--', '2001:db8::1']);
  assert.deepEqual(tracerouteArgs({ address: v4, family: 4, protocol: 'tcp', port: 443, maxHops: 5, queries: 1 }).slice(0, 5), ['-n', '-4', '-T', '-p', '443']);
  assert.deepEqual(mtrArgs({ address: v4, family: 4, protocol: 'udp', port: 53, maxHops: 30, packets: 10 }), ['-n', '-4', '-u', '-P', '53', '-c', '10', '-i', '1', '-G', '2', '-m', '30', '--json', '-o', 'LDRSNBAWV', '--', '192.0.2.1']);
});

test('a value outside its bound, or a target that is not a numeric address of its family, is a TypeError: nothing runs', () => {
  assert.throws(() => pingArgs({ address: v4, family: 4, packets: 17 }), TypeError);
  assert.throws(() => tracerouteArgs({ address: v4, family: 4, protocol: 'icmp', port: 33_434, maxHops: 31, queries: 3 }), TypeError);
  assert.throws(() => tracerouteArgs({ address: v4, family: 4, protocol: 'udp', port: 65_536, maxHops: 30, queries: 3 }), TypeError);
  assert.throws(() => mtrArgs({ address: v4, family: 4, protocol: 'icmp', port: 1, maxHops: 30, packets: 0 }), TypeError);
  for (const bad of ['example.com', '-p 22', '192.0.2.1; reboot', '$(id)', 'fe80::1%eth0']) {
    assert.throws(() => pingArgs({ address: bad as CheckedAddress, family: bad.includes(':') ? 6 : 4, packets: 1 }), TypeError, bad);
  }
  assert.throws(() => pingArgs({ address: v6, family: 4, packets: 1 }), TypeError, 'an IPv6 address with -4');
});
