import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DnsLookupService, type DnsLookupResult } from '../../../src/domain/dns/lookup.js';
import { TargetForbiddenError, ValidationError } from '../../../src/errors.js';
import { TargetPolicy } from '../../../src/infra/net/policy.js';
import { DnsCache } from '../../../src/infra/dns/cache.js';
import { StubResolver } from '../../../src/infra/dns/stub-resolver.js';
import { startDnsServer, type DnsFixture } from '../../fixtures/dns-server.js';
import { eventually } from '../../helpers/eventually.js';

let dns: DnsFixture;
before(async () => {
  dns = await startDnsServer({
    records: [
      { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.1' },
      { name: 'example.test', type: 'MX', ttl: 300, data: { preference: 5, exchange: 'mail.example.test' } },
      { name: 'other.test', type: 'A', ttl: 300, data: '192.0.2.2' },
      { name: 'xn--bcher-kva.test', type: 'A', ttl: 300, data: '192.0.2.3' },
      { name: '1.2.0.192.in-addr.arpa', type: 'PTR', ttl: 300, data: 'example.test' },
      { name: '9.9.9.10.in-addr.arpa', type: 'PTR', ttl: 300, data: 'internal.test' },
      { name: '10.in-addr.arpa', type: 'SOA', ttl: 300, data: { mname: 'ns.internal.test', rname: 'hostmaster.internal.test', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 1 } },
      ...Array.from({ length: 30 }, (_, i) => ({ name: `host${i}.test`, type: 'A' as const, ttl: 60, data: `198.51.100.${i}` })),
    ],
  });
});
after(() => dns.close());

/** The fixture's PTR is of a documentation address, which the target policy blocks unless allowed. */
function service(allowTargets: string[] = ['192.0.2.0/24']): DnsLookupService {
  // The fixture answers at once (or when a test lets it): a timeout no busy machine reaches.
  return new DnsLookupService({ client: new StubResolver({ servers: [dns.server], timeoutMs: 5_000, cache: new DnsCache() }), policy: new TargetPolicy(allowTargets) });
}

test('a lookup has the API shape', async () => {
  const result = await service().lookup('Example.test.', 'MX');
  assert.deepEqual(
    { ...result, response_time: 0 },
    {
      domain: 'example.test',
      type: 'MX',
      status: 'NOERROR',
      records: [{ type: 'MX', ttl: 300, priority: 5, exchange: 'mail.example.test' }],
      resolver: `127.0.0.1:${dns.port}`,
      response_time: 0,
      cached: false,
    },
  );
  assert.equal(typeof result.response_time, 'number');
});

test('type defaults to A and is case-insensitive', async () => {
  const s = service();
  assert.equal((await s.lookup('example.test')).type, 'A');
  assert.equal((await s.lookup('example.test', 'mx')).type, 'MX');
  await assert.rejects(s.lookup('example.test', 'HINFO'), /^ValidationError: type: must be one of/);
});

test('IDN is asked as punycode', async () => {
  dns.resetLog();
  const result = await service().lookup('bücher.test');
  assert.equal(result.domain, 'xn--bcher-kva.test');
  assert.equal(result.records[0]?.type === 'A' && result.records[0].address, '192.0.2.3');
  assert.equal(dns.queries[0]?.name, 'xn--bcher-kva.test');
});

test('PTR of an IP address', async () => {
  const result = await service().lookup('192.0.2.1', 'PTR');
  assert.equal(result.domain, '1.2.0.192.in-addr.arpa');
  assert.deepEqual(result.records, [{ type: 'PTR', ttl: 300, value: 'example.test' }]);
});

test('a reverse name of a blocked range is refused before it is asked, whatever its spelling and type', async () => {
  const s = service([]);
  dns.resetLog();
  for (const [input, type] of [
    ['10.9.9.9', 'PTR'],
    ['::ffff:10.9.9.9', 'PTR'],
    ['9.9.9.10.in-addr.arpa', 'PTR'],
    ['9.9.9.10.IN-ADDR.Arpa.', 'ptr'],
    ['10.in-addr.arpa', 'SOA'],
    ['10.in-addr.arpa', 'NS'],
    ['x.9.10.in-addr.arpa', 'TXT'],
    ['1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa', 'PTR'],
    ['d.f.ip6.arpa', 'SOA'],
  ] as const) {
    await assert.rejects(s.lookup(input, type), TargetForbiddenError, `${input} ${type}`);
  }
  assert.equal(dns.count(), 0, 'nothing was asked');
  // A public block's reverse zone, and one that spans public space, are asked.
  assert.equal((await s.lookup('in-addr.arpa', 'NS')).domain, 'in-addr.arpa');
  assert.equal((await s.lookup('8.8.8.8', 'PTR')).domain, '8.8.8.8.in-addr.arpa');
  // NETDIAG_ALLOW_TARGETS opts the range back in.
  const allowed = await service(['10.9.0.0/16']).lookup('10.9.9.9', 'PTR');
  assert.deepEqual(allowed.records, [{ type: 'PTR', ttl: 300, value: 'internal.test' }]);
  await assert.rejects(service(['10.9.0.0/16']).lookup('10.in-addr.arpa', 'SOA'), TargetForbiddenError, 'a /16 allowed does not open its /8');
});

test('NXDOMAIN is an answer, not an error', async () => {
  const result = await service().lookup('nope.test');
  assert.equal(result.status, 'NXDOMAIN');
  assert.deepEqual(result.records, []);
});

test('invalid names are refused before any query', async () => {
  dns.resetLog();
  await assert.rejects(service().lookup('bad..name'), ValidationError);
  await assert.rejects(service().lookup('-bad.test'), /^ValidationError: domain: label "-bad" must not start or end with a hyphen$/);
  assert.equal(dns.count(), 0);
});

test('bulk: input order, duplicates asked once and reported at each position', async () => {
  dns.resetLog();
  // Every entry is valid: every item is a result.
  const results = (await service().lookupBulk(['other.test', 'example.test', 'OTHER.test.', 'nope.test', 'example.test'])) as DnsLookupResult[];
  assert.deepEqual(
    results.map((r) => [r.domain, r.status]),
    [
      ['other.test', 'NOERROR'],
      ['example.test', 'NOERROR'],
      ['other.test', 'NOERROR'],
      ['nope.test', 'NXDOMAIN'],
      ['example.test', 'NOERROR'],
    ],
  );
  assert.equal(dns.count({ name: 'other.test' }), 1);
  assert.equal(dns.count({ name: 'example.test' }), 1);
  assert.equal(dns.count(), 3);
});

test('bulk runs concurrently', async () => {
  const names = Array.from({ length: 30 }, (_, i) => `host${i}.test`);
  // No answer until every name has been asked: one at a time would never get there.
  let answer!: () => void;
  const until = new Promise<void>((resolve) => (answer = resolve));
  for (const name of names) dns.behave(name, { until });
  dns.resetLog();
  try {
    const pending = service().lookupBulk(names);
    const asked = () => new Set(dns.queries.map((q) => q.name)).size;
    await eventually(asked, (n) => n === names.length, { what: 'every name asked before any answer' });
    answer();
    const results = (await pending) as DnsLookupResult[];
    assert.deepEqual(
      results.map((r) => (r.records[0]?.type === 'A' ? r.records[0].address : null)),
      names.map((_, i) => `198.51.100.${i}`),
    );
  } finally {
    for (const name of names) dns.behave(name, null);
  }
});

test('bulk bounds and invalid entries', async () => {
  const s = service();
  await assert.rejects(s.lookupBulk([]), /^ValidationError: domains: at least 1 entry$/);
  await assert.rejects(
    s.lookupBulk(Array.from({ length: 51 }, (_, i) => `d${i}.test`)),
    /^ValidationError: domains: at most 50 entries$/,
  );
  dns.resetLog();
  // docs/api.md, "Bulk calls" (issue 24): an invalid entry is its item, no longer a ValidationError.
  const items = await s.lookupBulk(['a.test', 'b.test', 'c.test', 'bad name.test']);
  const bad = items[3] as { error: string; error_code: string; domain: string };
  assert.equal(bad.domain, 'bad name.test');
  assert.equal(bad.error_code, 'validation_error');
  assert.match(bad.error, /^domains\[3\]: /);
  assert.equal(dns.count({ name: 'bad name.test' }), 0);
  await assert.rejects(s.lookupBulk(['a.test'], 'XYZ'), /type: must be one of/);
});
