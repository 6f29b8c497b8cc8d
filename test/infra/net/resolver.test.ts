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
  resolver = new DnsHostResolver([{ host: dns.host, port: dns.port }], { timeoutMs: 100, tries: 1, deadlineMs: 400 });
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

test('a silent server is ETIMEOUT within the deadline', async () => {
  const started = performance.now();
  await assert.rejects(resolver.resolve('silent.test', 4), (e: unknown) => e instanceof ResolveError && e.code === 'ETIMEOUT');
  assert.ok(performance.now() - started < 1_500);
});

test('a resolver needs servers', () => {
  assert.throws(() => new DnsHostResolver([]), TypeError);
});
