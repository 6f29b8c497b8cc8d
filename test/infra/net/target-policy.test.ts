import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../../src/config.js';
import { ResolveError, TargetForbiddenError, ValidationError } from '../../../src/errors.js';
import { createDialer, type Dialer } from '../../../src/infra/net/dialer.js';
import { connectSpy, startListener, type ConnectSpy } from './fixtures/connect-spy.js';
import { startDnsServer, type TestDnsServer } from './fixtures/dns-server.js';

/** Connects to a live listener answer at once: a timeout no busy machine reaches, so the answer never depends on its speed. */
const LIVE_TIMEOUT_MS = 30_000;

/**
 * Every spelling a user might use to reach a blocked range, through the real path:
 * env -> Config -> createDialer -> resolve (a real DNS server on loopback) -> connect.
 * Forbidden rows must fail before the dialer creates any socket.
 */

type Row =
  | { target: string; policy?: 'optin'; forbidden: { type: string; range: string } }
  | { target: string; policy?: 'optin'; allowed: string[]; connect?: boolean }
  | { target: string; invalid: true }
  | { target: string; unresolved: 'ENOTFOUND' | 'ENODATA' };

const OPT_IN = '127.0.0.0/8,::1/128,10.0.0.0/8';

const loopback = { type: 'loopback', range: '127.0.0.0/8' };
const loopback6 = { type: 'loopback', range: '::1/128' };
const ten = { type: 'private', range: '10.0.0.0/8' };

const ROWS: Row[] = [
  // IPv4 loopback in every inet_aton spelling
  { target: '127.0.0.1', forbidden: loopback },
  { target: '2130706433', forbidden: loopback },
  { target: '0x7f.1', forbidden: loopback },
  { target: '127.1', forbidden: loopback },
  { target: '127.0.1', forbidden: loopback },
  { target: '0177.0.0.1', forbidden: loopback },
  { target: '0x7f000001', forbidden: loopback },
  { target: '0X7F.0.0.1', forbidden: loopback },
  { target: '017700000001', forbidden: loopback },
  { target: '127.0.0.1.', forbidden: loopback },
  { target: ' 127.0.0.1 ', forbidden: loopback },
  { target: '127.255.255.254', forbidden: loopback },
  { target: '１２７.０.０.１', forbidden: loopback },
  // IPv6 spellings of IPv4 loopback and private space
  { target: '[::ffff:7f00:1]', forbidden: loopback },
  { target: '[::ffff:127.0.0.1]', forbidden: loopback },
  { target: '::ffff:127.0.0.1', forbidden: loopback },
  { target: '0:0:0:0:0:ffff:7f00:1', forbidden: loopback },
  { target: '::ffff:10.0.0.1', forbidden: ten },
  { target: '::ffff:169.254.169.254', forbidden: { type: 'link_local', range: '169.254.0.0/16' } },
  { target: '64:ff9b::a00:1', forbidden: ten },
  { target: '64:ff9b::7f00:1', forbidden: loopback },
  { target: '64:ff9b:1::a9fe:a9fe', forbidden: { type: 'link_local', range: '169.254.0.0/16' } },
  { target: '2002:a00:1::', forbidden: ten },
  { target: '2002:7f00:1::1', forbidden: loopback },
  { target: '2001:0:4136:e378:8000:63bf:80ff:fffe', forbidden: loopback },
  { target: '::7f00:1', forbidden: loopback },
  // IPv6 special ranges
  { target: '::1', forbidden: loopback6 },
  { target: '[::1]', forbidden: loopback6 },
  { target: '0:0:0:0:0:0:0:1', forbidden: loopback6 },
  { target: '::', forbidden: { type: 'unspecified', range: '::/128' } },
  { target: 'fe80::1%lo', forbidden: { type: 'link_local', range: 'fe80::/10' } },
  { target: '[fe80::1%eth0]', forbidden: { type: 'link_local', range: 'fe80::/10' } },
  { target: 'FE80::ABCD', forbidden: { type: 'link_local', range: 'fe80::/10' } },
  { target: 'fc00::1', forbidden: { type: 'unique_local', range: 'fc00::/7' } },
  { target: 'fd12:3456::1', forbidden: { type: 'unique_local', range: 'fc00::/7' } },
  { target: 'ff02::1', forbidden: { type: 'multicast', range: 'ff00::/8' } },
  { target: '2001:db8::1', forbidden: { type: 'documentation', range: '2001:db8::/32' } },
  { target: '3fff::1', forbidden: { type: 'documentation', range: '3fff::/20' } },
  { target: '2001:2::1', forbidden: { type: 'benchmarking', range: '2001:2::/48' } },
  { target: '100::1', forbidden: { type: 'reserved', range: '100::/64' } },
  { target: '2001:10::1', forbidden: { type: 'reserved', range: '2001::/23' } },
  { target: 'fec0::1', forbidden: { type: 'reserved', range: 'fec0::/10' } },
  { target: '4000::1', forbidden: { type: 'reserved', range: '4000::/3' } },
  // IPv4 special ranges
  { target: '0.0.0.0', forbidden: { type: 'unspecified', range: '0.0.0.0/8' } },
  { target: '0', forbidden: { type: 'unspecified', range: '0.0.0.0/8' } },
  { target: '10.0.0.1', forbidden: ten },
  { target: '10.255.255.255', forbidden: ten },
  { target: '172.16.5.4', forbidden: { type: 'private', range: '172.16.0.0/12' } },
  { target: '172.31.255.255', forbidden: { type: 'private', range: '172.16.0.0/12' } },
  { target: '192.168.1.1', forbidden: { type: 'private', range: '192.168.0.0/16' } },
  { target: '100.64.0.1', forbidden: { type: 'cgnat', range: '100.64.0.0/10' } },
  { target: '100.127.255.255', forbidden: { type: 'cgnat', range: '100.64.0.0/10' } },
  { target: '169.254.169.254', forbidden: { type: 'link_local', range: '169.254.0.0/16' } },
  { target: '0xa9fea9fe', forbidden: { type: 'link_local', range: '169.254.0.0/16' } },
  { target: '0251.0376.0251.0376', forbidden: { type: 'link_local', range: '169.254.0.0/16' } },
  { target: '192.0.0.8', forbidden: { type: 'reserved', range: '192.0.0.0/24' } },
  { target: '192.0.2.1', forbidden: { type: 'documentation', range: '192.0.2.0/24' } },
  { target: '198.51.100.7', forbidden: { type: 'documentation', range: '198.51.100.0/24' } },
  { target: '203.0.113.9', forbidden: { type: 'documentation', range: '203.0.113.0/24' } },
  { target: '198.18.0.1', forbidden: { type: 'benchmarking', range: '198.18.0.0/15' } },
  { target: '198.19.255.1', forbidden: { type: 'benchmarking', range: '198.18.0.0/15' } },
  { target: '192.88.99.1', forbidden: { type: 'reserved', range: '192.88.99.0/24' } },
  { target: '224.0.0.1', forbidden: { type: 'multicast', range: '224.0.0.0/4' } },
  { target: '239.255.255.250', forbidden: { type: 'multicast', range: '224.0.0.0/4' } },
  { target: '240.0.0.1', forbidden: { type: 'reserved', range: '240.0.0.0/4' } },
  { target: '255.255.255.255', forbidden: { type: 'broadcast', range: '255.255.255.255/32' } },
  { target: '4294967295', forbidden: { type: 'broadcast', range: '255.255.255.255/32' } },
  // Names: RFC 6761 localhost never reaches DNS; the rest come from the loopback DNS server
  { target: 'localhost', forbidden: loopback },
  { target: 'LOCALHOST.', forbidden: loopback },
  { target: 'api.localhost', forbidden: loopback },
  { target: 'private.test', forbidden: ten },
  { target: 'loop.test', forbidden: loopback },
  { target: 'meta.test', forbidden: { type: 'link_local', range: '169.254.0.0/16' } },
  { target: 'mixed.test', forbidden: { type: 'private', range: '192.168.0.0/16' } },
  { target: 'ula6.test', forbidden: { type: 'unique_local', range: 'fc00::/7' } },
  { target: 'mapped6.test', forbidden: loopback },
  { target: 'private-behind-public6.test', forbidden: ten },

  // Public: resolution and classification only, never a connect
  { target: '8.8.8.8', allowed: ['8.8.8.8'] },
  { target: '1.1.1.1', allowed: ['1.1.1.1'] },
  { target: '134744072', allowed: ['8.8.8.8'] },
  { target: '0x08080808', allowed: ['8.8.8.8'] },
  { target: '100.63.255.255', allowed: ['100.63.255.255'] },
  { target: '100.128.0.0', allowed: ['100.128.0.0'] },
  { target: '172.32.0.1', allowed: ['172.32.0.1'] },
  { target: '192.0.0.9', allowed: ['192.0.0.9'] },
  { target: '2606:4700::1111', allowed: ['2606:4700::1111'] },
  { target: '[2606:4700::1111]', allowed: ['2606:4700::1111'] },
  { target: '2001:4860:4860:0:0:0:0:8888', allowed: ['2001:4860:4860::8888'] },
  { target: '::ffff:8.8.8.8', allowed: ['8.8.8.8'] },
  { target: '64:ff9b::808:808', allowed: ['64:ff9b::808:808'] },
  { target: '2002:808:808::1', allowed: ['2002:808:808::1'] },
  { target: 'public.test', allowed: ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] },
  { target: 'Public.TEST.', allowed: ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'] },
  { target: 'bücher.test', allowed: ['93.184.216.35'] },

  // NETDIAG_ALLOW_TARGETS opt-ins; loopback ones really connect to a listener
  { target: '127.0.0.1', policy: 'optin', allowed: ['127.0.0.1'], connect: true },
  { target: '2130706433', policy: 'optin', allowed: ['127.0.0.1'], connect: true },
  { target: '0x7f.1', policy: 'optin', allowed: ['127.0.0.1'], connect: true },
  { target: '[::ffff:127.0.0.1]', policy: 'optin', allowed: ['127.0.0.1'], connect: true },
  { target: '::1', policy: 'optin', allowed: ['::1'], connect: true },
  { target: 'localhost', policy: 'optin', allowed: ['127.0.0.1', '::1'], connect: true },
  { target: 'loop.test', policy: 'optin', allowed: ['127.0.0.1'], connect: true },
  { target: 'private.test', policy: 'optin', allowed: ['10.0.0.5'] },
  { target: '64:ff9b::a00:1', policy: 'optin', allowed: ['64:ff9b::a00:1'] },
  { target: '192.168.1.1', policy: 'optin', forbidden: { type: 'private', range: '192.168.0.0/16' } },
  { target: 'fe80::1%lo', policy: 'optin', forbidden: { type: 'link_local', range: 'fe80::/10' } },
  { target: 'mixed.test', policy: 'optin', forbidden: { type: 'private', range: '192.168.0.0/16' } },
  { target: '::2', policy: 'optin', forbidden: { type: 'unspecified', range: '0.0.0.0/8' } },

  // Bad spellings: 400 naming the caller's field
  { target: '', invalid: true },
  { target: '   ', invalid: true },
  { target: '08.0.0.1', invalid: true },
  { target: '1.2.3.4.5', invalid: true },
  { target: '256.0.0.1', invalid: true },
  { target: '4294967296', invalid: true },
  { target: '1.2.3.0x100', invalid: true },
  { target: 'foo.123', invalid: true },
  { target: 'a..b', invalid: true },
  { target: '-a.example', invalid: true },
  { target: 'a_b.example', invalid: true },
  { target: `${'a'.repeat(64)}.example`, invalid: true },
  { target: 'exa mple.com', invalid: true },
  { target: 'xn--zz.example', invalid: true },
  { target: 'http://example.com', invalid: true },
  { target: 'example.com:80', invalid: true },
  { target: '[::1]:80', invalid: true },
  { target: '[::1', invalid: true },
  { target: '::ffff:1.2.3.256', invalid: true },
  { target: '1::2::3', invalid: true },
  { target: 'g::1', invalid: true },
  { target: 'fe80::1%', invalid: true },

  { target: 'nx.test', unresolved: 'ENOTFOUND' },
  { target: 'empty.test', unresolved: 'ENODATA' },
];

describe('target policy: spellings table', () => {
  let dns: TestDnsServer;
  let listen4: Awaited<ReturnType<typeof startListener>>;
  let listen6: Awaited<ReturnType<typeof startListener>>;
  const everyHost: string[] = [];

  before(async () => {
    dns = await startDnsServer({
      'private.test': { A: ['10.0.0.5'] },
      'loop.test': { A: ['127.0.0.1'] },
      'meta.test': { A: ['169.254.169.254'] },
      'mixed.test': { A: ['8.8.8.8', '192.168.0.1'] },
      'ula6.test': { AAAA: ['fd00::1'] },
      'mapped6.test': { AAAA: ['::ffff:127.0.0.1'] },
      'private-behind-public6.test': { A: ['10.9.9.9'], AAAA: ['2606:4700::1111'] },
      'public.test': { A: ['93.184.216.34'], AAAA: ['2606:2800:220:1:248:1893:25c8:1946'] },
      'xn--bcher-kva.test': { A: ['93.184.216.35'] },
      'empty.test': {},
    });
    listen4 = await startListener('127.0.0.1');
    listen6 = await startListener('::1');
  });
  after(async () => {
    await Promise.all([dns.close(), listen4.close(), listen6.close()]);
  });

  function dialerFor(policy: 'default' | 'optin'): { dialer: Dialer; spy: ConnectSpy } {
    const config = loadConfig({
      NETDIAG_DNS_SERVERS: `${dns.host}:${dns.port}`,
      ...(policy === 'optin' ? { NETDIAG_ALLOW_TARGETS: OPT_IN } : {}),
    });
    const spy = connectSpy();
    return { dialer: createDialer(config, { connectFn: spy.fn }), spy };
  }

  test('the table is large enough to mean something', () => {
    assert.ok(ROWS.length >= 60, `${ROWS.length} rows`);
  });

  for (const row of ROWS) {
    const policy = 'policy' in row && row.policy === 'optin' ? 'optin' : 'default';
    const label = `${JSON.stringify(row.target)} (${policy})`;

    if ('forbidden' in row) {
      test(`${label} is forbidden as ${row.forbidden.type} ${row.forbidden.range}, with no connect`, async () => {
        const { dialer, spy } = dialerFor(policy);
        const err = await dialer.resolve(row.target, { field: 'host' }).then(
          () => assert.fail('resolve should have refused'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof TargetForbiddenError, String(err));
        assert.equal(err.code, 'target_forbidden');
        assert.equal(err.status, 403);
        assert.equal(err.details?.type, row.forbidden.type);
        assert.equal(err.details?.range, row.forbidden.range);
        assert.match(err.message, new RegExp(row.forbidden.range.replace(/[.:/]/g, '\\$&')));
        assert.equal(dialer.stats.connectAttempts, 0);
        assert.equal(spy.calls.length, 0);
      });
    } else if ('allowed' in row) {
      test(`${label} is allowed as ${row.allowed.join(', ')}`, async () => {
        const { dialer, spy } = dialerFor(policy);
        const resolved = await dialer.resolve(row.target, { field: 'host' });
        assert.deepEqual([...resolved.addresses], row.allowed);
        if (row.connect) {
          for (const address of resolved.addresses) {
            const port = address.includes(':') ? listen6.port : listen4.port;
            const socket = await dialer.connect(address, port, { timeoutMs: LIVE_TIMEOUT_MS });
            assert.equal(socket.remoteAddress, address);
            socket.destroy();
          }
          assert.equal(dialer.stats.connectAttempts, resolved.addresses.length);
        }
        everyHost.push(...spy.hosts());
        if (!row.connect) assert.equal(spy.calls.length, 0);
      });
    } else if ('invalid' in row) {
      test(`${label} is a validation error on the given field`, async () => {
        const { dialer, spy } = dialerFor('default');
        await assert.rejects(dialer.resolve(row.target, { field: 'host' }), (e: unknown) => {
          assert.ok(e instanceof ValidationError, String(e));
          assert.equal(e.details?.field, 'host');
          assert.match(e.message, /^host: /);
          return true;
        });
        assert.equal(spy.calls.length, 0);
      });
    } else {
      test(`${label} does not resolve: ${row.unresolved}`, async () => {
        const { dialer, spy } = dialerFor('default');
        await assert.rejects(dialer.resolve(row.target), (e: unknown) => {
          assert.ok(e instanceof ResolveError, String(e));
          assert.equal(e.code, row.unresolved);
          return true;
        });
        assert.equal(spy.calls.length, 0);
      });
    }
  }

  test('only loopback addresses were ever dialled', () => {
    assert.ok(everyHost.length > 0);
    for (const host of everyHost) assert.ok(host === '127.0.0.1' || host === '::1', host);
  });

  test('localhost is answered without asking DNS', () => {
    assert.ok(!dns.queries.some((q) => q.includes('localhost')), dns.queries.join(', '));
  });
});
