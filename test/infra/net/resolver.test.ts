import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DnsHostResolver } from '../../../src/infra/net/resolver.js';
import { startDnsServer, type TestDnsServer } from './fixtures/dns-server.js';
import { ResolveError } from '../../../src/errors.js';

let dns: TestDnsServer;
let resolver: DnsHostResolver;

before(async () => {
  dns = await startDnsServer({
    'both.test': { A: ['93.184.216.34', '93.184.216.35'], AAAA: ['2606:2800:220:1::1'] },
    'v4only.test': { A: ['93.184.216.34'] },
    'silent.test': { silent: true },
  });
  // The fixture answers at once: a timeout no busy machine reaches.
  resolver = new DnsHostResolver([{ host: dns.host, port: dns.port }], { timeoutMs: 5_000, tries: 1, deadlineMs: 10_000 });
});
after(() => dns.close());

test('A and AAAA come from the configured server on a loopback port', async () => {
  assert.deepEqual(await resolver.resolve('both.test', 4), ['93.184.216.34', '93.184.216.35']);
  assert.deepEqual(await resolver.resolve('both.test', 6), ['2606:2800:220:1::1']);
  assert.ok(dns.queries.includes('A both.test') && dns.queries.includes('AAAA both.test'));
});

test('NXDOMAIN is ENOTFOUND, a name without the family is ENODATA', async () => {
  await assert.rejects(resolver.resolve('nope.test', 4), (e: unknown) => e instanceof ResolveError && e.code === 'ENOTFOUND');
  await assert.rejects(resolver.resolve('v4only.test', 6), (e: unknown) => {
    assert.ok(e instanceof ResolveError);
    assert.equal(e.code, 'ENODATA');
    assert.match(e.message, /no AAAA/);
    return true;
  });
});

test('a silent server is ETIMEOUT by the deadline', { timeout: 15_000 }, async () => {
  // c-ares's own timeout is beyond the test's give-up: only the deadline can end the query in time.
  const silent = new DnsHostResolver([{ host: dns.host, port: dns.port }], { timeoutMs: 60_000, tries: 1, deadlineMs: 400 });
  await assert.rejects(silent.resolve('silent.test', 4), (e: unknown) => e instanceof ResolveError && e.code === 'ETIMEOUT');
});

test('a resolver needs servers', () => {
  assert.throws(() => new DnsHostResolver([]), TypeError);
});
