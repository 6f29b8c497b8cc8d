import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TargetForbiddenError } from '../../../src/errors.js';
import { queryName, reverseNetwork } from '../../../src/domain/dns/names.js';
import { TargetPolicy } from '../../../src/infra/net/policy.js';

/**
 * Reverse names as an attacker spells them (issue 38): the block each one lies under, and
 * whether the target policy lets it be asked. Every input goes through queryName first, as a
 * lookup does, so case, a trailing dot and IDN digits are normalised exactly as they are asked.
 */

function block(input: string): string | null {
  const b = reverseNetwork(queryName(input, 'PTR'));
  return b === null ? null : `${b.network.toString()}/${b.bits}`;
}

test('reverseNetwork: the block a name lies under, read from the zone leftwards', () => {
  const rows: Array<[string, string | null]> = [
    ['10.9.9.9', '10.9.9.9/32'],
    ['9.9.9.10.in-addr.arpa', '10.9.9.9/32'],
    ['9.9.9.10.IN-ADDR.ARPA.', '10.9.9.9/32'],
    ['10.in-addr.arpa', '10.0.0.0/8'],
    ['168.192.in-addr.arpa', '192.168.0.0/16'],
    ['in-addr.arpa', '0.0.0.0/0'],
    // More labels than an address has, or one that is no octet: the zone of the block read so far.
    ['x.9.9.9.10.in-addr.arpa', '10.9.9.9/32'],
    ['1.0-25.9.10.in-addr.arpa', '10.9.0.0/16'],
    ['010.9.10.in-addr.arpa', '10.9.0.0/16'],
    ['1.2.3.4.5.in-addr.arpa', '5.4.3.2/32'],
    ['fd00::1', 'fd00::1/128'],
    ['d.f.ip6.arpa', 'fd00::/8'],
    ['D.F.IP6.ARPA.', 'fd00::/8'],
    ['::ffff:10.9.9.9', '::ffff:a09:909/128'],
    ['ip6.arpa', '::/0'],
    ['example.test', null],
    ['in-addr.arpa.example.test', null],
    ['notin-addr.arpa', null],
  ];
  for (const [input, expected] of rows) assert.equal(block(input), expected, input);
});

test('checkReverse: a block wholly in a blocked range is refused, naming it; public and mixed blocks pass', () => {
  const policy = new TargetPolicy();
  const judge = (input: string): string => {
    const name = queryName(input, 'PTR');
    const b = reverseNetwork(name)!;
    try {
      policy.checkReverse(name, b.network, b.bits);
      return 'allowed';
    } catch (err) {
      assert.ok(err instanceof TargetForbiddenError, String(err));
      return `${(err.details as { type: string }).type} ${(err.details as { range: string }).range}`;
    }
  };
  const rows: Array<[string, string]> = [
    ['10.9.9.9', 'private 10.0.0.0/8'],
    ['9.9.9.10.in-addr.arpa', 'private 10.0.0.0/8'],
    ['10.in-addr.arpa', 'private 10.0.0.0/8'],
    ['16.172.in-addr.arpa', 'private 172.16.0.0/12'],
    ['168.192.in-addr.arpa', 'private 192.168.0.0/16'],
    ['64.100.in-addr.arpa', 'cgnat 100.64.0.0/10'],
    ['127.in-addr.arpa', 'loopback 127.0.0.0/8'],
    ['254.169.in-addr.arpa', 'link_local 169.254.0.0/16'],
    ['254.169.254.169.in-addr.arpa', 'link_local 169.254.0.0/16'],
    ['::1', 'loopback ::1/128'],
    ['fe80::1', 'link_local fe80::/10'],
    ['8.e.f.ip6.arpa', 'link_local fe80::/10'],
    ['d.f.ip6.arpa', 'unique_local fc00::/7'],
    ['::ffff:10.9.9.9', 'private 10.0.0.0/8'],
    // ::ffff:10.0.0.0/104, and 6to4's 2002:a00::/24: the IPv4 they carry is private.
    [`a.0.f.f.f.f.${'0.'.repeat(20)}ip6.arpa`, 'private 10.0.0.0/8'],
    ['a.0.2.0.0.2.ip6.arpa', 'private 10.0.0.0/8'],
    ['8.8.8.8', 'allowed'],
    ['8.in-addr.arpa', 'allowed'],
    ['172.in-addr.arpa', 'allowed'],
    ['in-addr.arpa', 'allowed'],
    ['ip6.arpa', 'allowed'],
    ['2606:4700::1111', 'allowed'],
  ];
  for (const [input, expected] of rows) assert.equal(judge(input), expected, input);
});

test('checkReverse: NETDIAG_ALLOW_TARGETS opts a block in only when one allowed range holds it all', () => {
  const check = (allow: string[], input: string): boolean => {
    const name = queryName(input, 'PTR');
    const b = reverseNetwork(name)!;
    try {
      new TargetPolicy(allow).checkReverse(name, b.network, b.bits);
      return true;
    } catch (err) {
      assert.ok(err instanceof TargetForbiddenError);
      assert.match(err.message, /is the reverse name of .*, which is in the blocked .* range .*NETDIAG_ALLOW_TARGETS/);
      return false;
    }
  };
  assert.equal(check(['10.9.0.0/16'], '10.9.9.9'), true);
  assert.equal(check(['10.9.0.0/16'], '9.10.in-addr.arpa'), true);
  assert.equal(check(['10.9.0.0/16'], '10.in-addr.arpa'), false, 'a /16 does not open its /8');
  assert.equal(check(['10.9.0.0/16'], '10.10.0.1'), false);
  assert.equal(check(['10.0.0.0/8'], '::ffff:10.9.9.9'), true, 'an IPv4-mapped address is its IPv4');
  assert.equal(check(['fd00::/8'], 'd.f.ip6.arpa'), true);
  assert.equal(check(['fd00::/16'], 'd.f.ip6.arpa'), false);
});
