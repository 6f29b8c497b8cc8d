import assert from 'node:assert/strict';
import { test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { classifyAddress, classifyIp, SPECIAL_RANGES } from '../../../src/net/ranges.js';

test('every table entry decides for its own first and last address, unless a more specific one does', () => {
  const bitsOf = (cidr: string): number => Number(cidr.split('/')[1]);
  for (const { cidr, type } of SPECIAL_RANGES) {
    const first = ipaddr.parseCIDR(cidr)[0];
    const last = (first.kind() === 'ipv4' ? ipaddr.IPv4 : ipaddr.IPv6).broadcastAddressFromCIDR(cidr);
    for (const addr of [first, last]) {
      const c = classifyAddress(addr);
      const where = `${addr.toString()} in ${cidr}`;
      if (c.range === cidr || (type === 'public' && c.type === 'public')) {
        assert.equal(c.type, type, where);
        continue;
      }
      const winner = SPECIAL_RANGES.find((r) => r.cidr === c.range);
      if (c.type === 'public') {
        // An IPv6 prefix carrying a public IPv4 (6to4, NAT64, Teredo, mapped).
        assert.ok(first.kind() === 'ipv6', where);
        continue;
      }
      assert.ok(winner, `${where} matched ${c.range}, which is not in the table`);
      const embeddedV4 = first.kind() === 'ipv6' && c.range.includes('.');
      assert.ok(embeddedV4 || bitsOf(c.range) > bitsOf(cidr), `${where} decided by the less specific ${c.range}`);
    }
  }
});

test('IP lookup types for everyday addresses', () => {
  const cases: Array<[string, string, string]> = [
    ['8.8.8.8', 'public', ''],
    ['10.1.2.3', 'private', '10.0.0.0/8'],
    ['127.0.0.53', 'loopback', '127.0.0.0/8'],
    ['169.254.169.254', 'link_local', '169.254.0.0/16'],
    ['100.64.1.1', 'cgnat', '100.64.0.0/10'],
    ['233.252.0.1', 'documentation', '233.252.0.0/24'],
    ['2a00:1450:4001:82b::200e', 'public', ''],
    ['fe80::1%eth0', 'link_local', 'fe80::/10'],
    ['fd00::1', 'unique_local', 'fc00::/7'],
    ['::', 'unspecified', '::/128'],
    ['2001:3::1', 'public', ''],
    ['2001:4:112::1', 'public', ''],
    ['5f00::1', 'reserved', '5f00::/16'],
  ];
  for (const [ip, type, range] of cases) assert.deepEqual([ip, classifyIp(ip).type, classifyIp(ip).range], [ip, type, range]);
});

test('embedded IPv4 decides when it is special, and is the effective ip', () => {
  assert.deepEqual(classifyIp('::ffff:192.168.0.1'), { type: 'private', range: '192.168.0.0/16', ip: '192.168.0.1' });
  assert.deepEqual(classifyIp('::ffff:8.8.8.8'), { type: 'public', range: '', ip: '8.8.8.8' });
  assert.deepEqual(classifyIp('64:ff9b::8.8.8.8'), { type: 'public', range: '', ip: '64:ff9b::808:808' });
  assert.deepEqual(classifyIp('2002:c0a8:101::1'), { type: 'private', range: '192.168.0.0/16', ip: '192.168.1.1' });
  // RFC 4380's own example: client 192.0.2.45 obfuscated in the last 32 bits
  assert.equal(classifyIp('2001:0:4136:e378:8000:63bf:3fff:fdd2').type, 'documentation');
  assert.deepEqual(classifyIp('::8.8.8.8'), { type: 'reserved', range: '::/96', ip: '::808:808' });
});

test('classifyIp takes canonical spellings only', () => {
  for (const bad of ['0x7f.1', '127.1', '01.2.3.4', '1.2.3.256', 'example.com', '12345::', '[::1]', '']) {
    assert.throws(() => classifyIp(bad), TypeError, bad);
  }
});
