import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DialError, TargetForbiddenError } from '../../../src/errors.js';
import type { CheckedAddress } from '../../../src/domain/dialer.js';
import { Dialer } from '../../../src/infra/net/dialer.js';
import { TargetPolicy } from '../../../src/infra/net/policy.js';
import { DnsHostResolver } from '../../../src/infra/net/resolver.js';
import { connectSpy } from './fixtures/connect-spy.js';
import { startDnsServer, type TestDnsServer } from './fixtures/dns-server.js';

/**
 * A rebinding name answers a public address when checked and 127.0.0.1 afterwards. The dialer
 * must connect to what it checked, and the second lookup must be refused.
 */

const PUBLIC = '93.184.216.34';
let dns: TestDnsServer;

before(async () => {
  dns = await startDnsServer({
    'rebind.test': { A: (asked) => (asked === 0 ? [PUBLIC] : ['127.0.0.1']), AAAA: [] },
  });
});
after(() => dns.close());

test('the dialer connects to the checked address, never to what DNS says later', async () => {
  const spy = connectSpy('ECONNREFUSED');
  const dialer = new Dialer({
    policy: new TargetPolicy([]),
    resolver: new DnsHostResolver([{ host: dns.host, port: dns.port }]),
    connectFn: spy.fn,
  });

  const first = await dialer.resolve('rebind.test', { family: 4 });
  assert.deepEqual([...first.addresses], [PUBLIC]);
  assert.equal(dns.queries.filter((q) => q === 'A rebind.test').length, 1);

  // The spy fails this connect instead of sending a packet to the public address.
  await assert.rejects(dialer.connect(first.addresses[0]!, 80, { timeoutMs: 1_000 }), (e: unknown) => {
    assert.ok(e instanceof DialError);
    assert.equal(e.code, 'ECONNREFUSED');
    return true;
  });
  assert.deepEqual(spy.hosts(), [PUBLIC]);
  // Connecting did not consult DNS again.
  assert.equal(dns.queries.filter((q) => q === 'A rebind.test').length, 1);

  // The name now points at loopback: refused before any socket.
  await assert.rejects(dialer.resolve('rebind.test', { family: 4 }), TargetForbiddenError);
  assert.equal(dns.queries.filter((q) => q === 'A rebind.test').length, 2);
  assert.deepEqual(spy.hosts(), [PUBLIC]);
  assert.equal(dialer.stats.connectAttempts, 1);
  assert.equal(dialer.stats.active, 0);
});

test('a string cast to CheckedAddress is checked again at connect time', async () => {
  const spy = connectSpy();
  const dialer = new Dialer({
    policy: new TargetPolicy([]),
    resolver: new DnsHostResolver([{ host: dns.host, port: dns.port }]),
    connectFn: spy.fn,
  });
  await assert.rejects(
    dialer.connect('127.0.0.1' as CheckedAddress, 80, { timeoutMs: 1_000 }),
    TargetForbiddenError,
  );
  await assert.rejects(
    dialer.connect('::ffff:7f00:1' as CheckedAddress, 80, { timeoutMs: 1_000 }),
    TargetForbiddenError,
  );
  await assert.rejects(dialer.connect('rebind.test' as CheckedAddress, 80, { timeoutMs: 1_000 }), TypeError);
  assert.equal(spy.calls.length, 0);
  assert.equal(dialer.stats.connectAttempts, 0);
});
