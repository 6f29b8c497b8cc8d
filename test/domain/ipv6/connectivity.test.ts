import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { testConnectivity } from '../../../src/domain/ipv6/index.js';
import { TargetForbiddenError, ValidationError } from '../../../src/errors.js';
import { Dialer, type ConnectFn } from '../../../src/infra/net/dialer.js';
import { TargetPolicy } from '../../../src/infra/net/policy.js';
import { DnsHostResolver } from '../../../src/infra/net/resolver.js';
import { closedPort, startListener } from '../../infra/net/fixtures/connect-spy.js';
import { startDnsServer, type TestDnsServer } from '../../infra/net/fixtures/dns-server.js';

describe('ipv6 testConnectivity', () => {
  let dns: TestDnsServer;
  let listener: Awaited<ReturnType<typeof startListener>>;
  let closed: number;

  before(async () => {
    dns = await startDnsServer({
      'v4only.test': { A: ['93.184.216.34'] },
      'loop6.test': { AAAA: ['::1'] },
    });
    listener = await startListener('::1');
    closed = await closedPort('::1');
  });
  after(async () => {
    await Promise.all([dns.close(), listener.close()]);
  });

  /**
   * A real dialer; `portMap` moves the well-known ports onto loopback ports this test owns,
   * since 443 and 80 cannot be bound here.
   */
  function deps(allow: string[], portMap: Record<number, number> = {}): { dialer: Dialer; seen: Array<[string, number]> } {
    const seen: Array<[string, number]> = [];
    const connectFn: ConnectFn = (o) => {
      seen.push([String(o.host), o.port]);
      assert.ok(o.host === '::1' || o.host === '127.0.0.1', `tests may only dial loopback, not ${o.host}`);
      return net.connect({ ...o, port: portMap[o.port] ?? o.port });
    };
    const dialer = new Dialer({
      policy: new TargetPolicy(allow),
      resolver: new DnsHostResolver([{ host: dns.host, port: dns.port }]),
      connectFn,
    });
    return { dialer, seen };
  }

  test('a listener on [::1] is reachable, with a response time', async () => {
    const { dialer } = deps(['::1/128']);
    const r = await testConnectivity({ dialer }, '::1', listener.port);
    assert.equal(r.reachable, true);
    assert.equal(r.target, '::1');
    assert.deepEqual(r.addresses, ['::1']);
    assert.equal(r.address, '::1');
    assert.equal(r.port, listener.port);
    assert.equal(r.error, null);
    assert.ok(typeof r.response_time === 'number' && r.response_time >= 0);
    assert.equal(Math.round(r.response_time * 100) / 100, r.response_time);
  });

  test('a closed port is not reachable, and says why', async () => {
    const { dialer } = deps(['::1/128']);
    const r = await testConnectivity({ dialer }, '[::1]', closed);
    assert.equal(r.reachable, false);
    assert.equal(r.address, null);
    assert.equal(r.response_time, null);
    assert.match(r.error ?? '', /connection refused/);
    assert.deepEqual(r.addresses, ['::1']);
  });

  test('without a port it tries 443, then 80', async () => {
    const { dialer, seen } = deps(['::1/128'], { 443: closed, 80: listener.port });
    const r = await testConnectivity({ dialer }, 'loop6.test');
    assert.equal(r.reachable, true);
    assert.equal(r.port, 80);
    assert.deepEqual(seen.map(([, p]) => p).sort(), [443, 80].sort());
  });

  test('443 wins when both answer', async () => {
    const { dialer } = deps(['::1/128'], { 443: listener.port, 80: listener.port });
    const r = await testConnectivity({ dialer }, '::1');
    assert.equal(r.port, 443);
  });

  test('nothing on either default port: both failures reported', async () => {
    const { dialer } = deps(['::1/128'], { 443: closed, 80: closed });
    const r = await testConnectivity({ dialer }, '::1');
    assert.equal(r.reachable, false);
    assert.match(r.error ?? '', /\[::1\]:443 connection refused; \[::1\]:80 connection refused/);
  });

  test('a name without AAAA is a result, not an error, and nothing is dialled', async () => {
    const { dialer, seen } = deps([]);
    const r = await testConnectivity({ dialer }, 'v4only.test');
    assert.deepEqual(r, {
      target: 'v4only.test',
      addresses: [],
      reachable: false,
      address: null,
      port: null,
      response_time: null,
      error: 'v4only.test has no AAAA (IPv6) record',
    });
    const v4 = await testConnectivity({ dialer }, '8.8.8.8');
    assert.equal(v4.reachable, false);
    assert.match(v4.error ?? '', /not an IPv6 address/);
    assert.equal(seen.length, 0);
  });

  test('forbidden targets throw before any connect; bad input is a 400', async () => {
    const { dialer, seen } = deps([]);
    await assert.rejects(testConnectivity({ dialer }, '::1', listener.port), TargetForbiddenError);
    await assert.rejects(testConnectivity({ dialer }, 'localhost'), TargetForbiddenError);
    await assert.rejects(testConnectivity({ dialer }, 'loop6.test'), TargetForbiddenError);
    await assert.rejects(
      testConnectivity({ dialer }, 'not a host'),
      (e: unknown) => e instanceof ValidationError && e.details?.field === 'target',
    );
    await assert.rejects(
      testConnectivity({ dialer }, '2606:4700::1111', 0),
      (e: unknown) => e instanceof ValidationError && e.details?.field === 'port',
    );
    assert.equal(seen.length, 0);
    assert.equal(dialer.stats.connectAttempts, 0);
  });

  test('localhost opted in resolves to ::1 only for the IPv6 test', async () => {
    const { dialer } = deps(['::1/128', '127.0.0.0/8']);
    const r = await testConnectivity({ dialer }, 'localhost', listener.port);
    assert.deepEqual(r.addresses, ['::1']);
    assert.equal(r.reachable, true);
  });
});
