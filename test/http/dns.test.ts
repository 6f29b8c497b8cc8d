import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { DnsLookupResult } from '../../src/operations/dns-lookup/schema.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { closedUdpPort, startDnsServer, type DnsFixture, type FixtureRecord } from '../fixtures/dns-server.js';
import { EXAMPLE_ZONE } from '../fixtures/example-zone.js';
import { alpn, ipv4, SVC_KEYS, svcbRecord, u16 } from '../fixtures/svcb.js';

/**
 * POST /api/dns/lookup and /api/dns/lookup-bulk over real HTTP, against a real DNS server on
 * loopback (NETDIAG_DNS_SERVERS points the app at it). Every response is checked against the
 * published OpenAPI document.
 */

const ZONE: FixtureRecord[] = [
  ...EXAMPLE_ZONE,
  { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' },
  { name: 'example.test', type: 'A', ttl: 299, data: '192.0.2.11' },
  { name: '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa', type: 'PTR', ttl: 1800, data: 'v6.example.test' },
  { name: 'xn--bcher-kva.example.test', type: 'A', ttl: 60, data: '192.0.2.20' },
  { name: 'tc.example.test', type: 'A', ttl: 77, data: '192.0.2.30' },
  { name: 'servfail.example.test', type: 'A', ttl: 60, data: '192.0.2.40' },
  ...Array.from({ length: 50 }, (_, i): FixtureRecord => ({ name: `host${i}.bulk.test`, type: 'A', ttl: 100 + i, data: `198.51.100.${i}` })),
  svcbRecord('HTTPS', 'example.test', 300, 1, '.', [[SVC_KEYS.alpn, alpn('h2', 'h3')], [SVC_KEYS.port, u16(8443)], [SVC_KEYS.ipv4hint, ipv4('192.0.2.10')]]),
  svcbRecord('SVCB', '_dns.example.test', 300, 1, 'dns.example.test', [[SVC_KEYS.alpn, alpn('dot')]]),
  { name: 'example.test', type: 'DNSKEY', ttl: 3600, data: { flags: 257, algorithm: 13, key: Buffer.from('netdiag test key') } },
  { name: 'example.test', type: 'DS', ttl: 3600, data: { keyTag: 2371, algorithm: 13, digestType: 2, digest: Buffer.from('00ff10ab', 'hex') } },
  { name: 'plain.test', type: 'A', ttl: 60, data: '192.0.2.50' },
  // The operator's own network, as its resolver knows it (issue 38).
  { name: '9.9.9.10.in-addr.arpa', type: 'PTR', ttl: 60, data: 'internal.test' },
  { name: '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa', type: 'PTR', ttl: 60, data: 'internal6.test' },
  // A public name leading into it, which a recursive resolver follows.
  { name: 'into-private.evil.test', type: 'CNAME', ttl: 60, data: '9.9.9.10.in-addr.arpa' },
  { name: 'into-public.evil.test', type: 'CNAME', ttl: 60, data: '10.2.0.192.in-addr.arpa' },
];

/** The `data` of a lookup, as the published schema describes it. */
type DnsResultBody = Static<typeof DnsLookupResult>;
type DnsRecordBody = DnsResultBody['records'][number];
interface Envelope<T> {
  success: boolean;
  data: T;
  message: string;
}
interface ErrorEnvelope {
  success: false;
  error: string;
  message: string;
  details?: { field?: string };
}

let dns: DnsFixture;
before(async () => {
  dns = await startDnsServer({
    records: ZONE,
    behaviours: { 'tc.example.test': 'truncate', 'servfail.example.test': 'SERVFAIL', 'refused.example.test': 'REFUSED', 'silent.example.test': 'drop' },
    secure: ['example.test'],
  });
});
after(() => dns.close());

/**
 * The zone's reverse names are of documentation addresses (192.0.2.10, 2001:db8::1), which the
 * target policy blocks like any special range: this suite opts them in, as an operator would.
 */
const ALLOWED = '127.0.0.0/8,192.0.2.0/24,2001:db8::/32';

async function app(t: TestContext, servers = `127.0.0.1:${dns.port}`, allow = ALLOWED): Promise<Built> {
  return build(t, { env: { NETDIAG_DNS_SERVERS: servers, NETDIAG_ALLOW_TARGETS: allow } });
}

/** POSTs, checks the body against the OpenAPI document, and hands back status and body. */
async function post<T>(built: Built, path: string, json: unknown): Promise<{ status: number; body: T }> {
  const res = await built.api(path, { json });
  const body = (await res.json()) as T;
  await assertMatchesOpenApi(built.app as FastifyInstance, 'POST', path, res.status, body);
  return { status: res.status, body };
}

async function lookup(built: Built, json: unknown): Promise<DnsResultBody> {
  const { status, body } = await post<Envelope<DnsResultBody>>(built, '/api/dns/lookup', json);
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.success, true);
  return body.data;
}

async function rejected(built: Built, path: string, json: unknown, message: string, status = 400): Promise<ErrorEnvelope> {
  const res = await post<ErrorEnvelope>(built, path, json);
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body.success, false);
  assert.equal(res.body.message, message);
  return res.body;
}

describe('POST /api/dns/lookup: every supported type, exact records and TTLs', () => {
  test('A by default: the full data object of docs/dns-whois.md', async (t) => {
    const built = await app(t);
    const data = await lookup(built, { domain: 'example.test' });
    assert.deepEqual(
      { ...data, response_time: 0 },
      {
        domain: 'example.test',
        type: 'A',
        status: 'NOERROR',
        records: [
          { type: 'A', ttl: 300, address: '192.0.2.10' },
          { type: 'A', ttl: 299, address: '192.0.2.11' },
        ],
        resolver: `127.0.0.1:${dns.port}`,
        response_time: 0,
        cached: false,
      },
    );
    assert.ok(Number.isFinite(data.response_time) && data.response_time >= 0);
    assert.match(String(data.response_time), /^\d+(\.\d{1,2})?$/, 'milliseconds with two decimals at most');
  });

  const cases: Array<[string, string, DnsRecordBody[]]> = [
    ['example.test', 'AAAA', [{ type: 'AAAA', ttl: 600, address: '2001:db8::10' }]],
    [
      'example.test',
      'MX',
      [
        { type: 'MX', ttl: 900, priority: 10, exchange: 'mx1.example.test' },
        { type: 'MX', ttl: 900, priority: 20, exchange: 'mx2.example.test' },
      ],
    ],
    ['example.test', 'TXT', [{ type: 'TXT', ttl: 120, value: 'v=spf1 include:_spf.example.test -all' }]],
    [
      'example.test',
      'NS',
      [
        { type: 'NS', ttl: 86400, value: 'ns1.example.test' },
        { type: 'NS', ttl: 86400, value: 'ns2.example.test' },
      ],
    ],
    ['www.example.test', 'CNAME', [{ type: 'CNAME', ttl: 60, value: 'example.test' }]],
    [
      'example.test',
      'SOA',
      [{ type: 'SOA', ttl: 3600, nsname: 'ns1.example.test', hostmaster: 'hostmaster.example.test', serial: 2024010201, refresh: 7200, retry: 900, expire: 1209600, minttl: 30 }],
    ],
    ['_sip._tcp.example.test', 'SRV', [{ type: 'SRV', ttl: 450, priority: 10, weight: 60, port: 5060, target: 'sip.example.test' }]],
    ['example.test', 'CAA', [{ type: 'CAA', ttl: 3600, flags: 0, tag: 'issue', value: 'letsencrypt.org' }]],
    ['10.2.0.192.in-addr.arpa', 'PTR', [{ type: 'PTR', ttl: 3600, value: 'example.test' }]],
    ['example.test', 'HTTPS', [{ type: 'HTTPS', ttl: 300, priority: 1, target: '.', params: { alpn: 'h2,h3', port: '8443', ipv4hint: '192.0.2.10' } }]],
    ['_dns.example.test', 'SVCB', [{ type: 'SVCB', ttl: 300, priority: 1, target: 'dns.example.test', params: { alpn: 'dot' } }]],
    ['example.test', 'DNSKEY', [{ type: 'DNSKEY', ttl: 3600, flags: 257, protocol: 3, algorithm: 13, key: Buffer.from('netdiag test key').toString('base64') }]],
    ['example.test', 'DS', [{ type: 'DS', ttl: 3600, key_tag: 2371, algorithm: 13, digest_type: 2, digest: '00FF10AB' }]],
  ];
  for (const [domain, type, records] of cases) {
    test(`${type} ${domain}`, async (t) => {
      const built = await app(t);
      const data = await lookup(built, { domain, type });
      assert.equal(data.domain, domain);
      assert.equal(data.type, type);
      assert.equal(data.status, 'NOERROR');
      assert.deepEqual(data.records, records);
    });
  }

  test('A through a CNAME: only the A records (the chain is not repeated)', async (t) => {
    const built = await app(t);
    const data = await lookup(built, { domain: 'www.example.test', type: 'A' });
    assert.deepEqual(data.records, [
      { type: 'A', ttl: 300, address: '192.0.2.10' },
      { type: 'A', ttl: 299, address: '192.0.2.11' },
    ]);
  });

  test('PTR of an IP address asks its reverse name (IPv4 and IPv6); domain reports that name', async (t) => {
    const built = await app(t);
    const v4 = await lookup(built, { domain: '192.0.2.10', type: 'PTR' });
    assert.equal(v4.domain, '10.2.0.192.in-addr.arpa');
    assert.deepEqual(v4.records, [{ type: 'PTR', ttl: 3600, value: 'example.test' }]);
    const v6 = await lookup(built, { domain: '2001:db8::1', type: 'ptr' });
    assert.equal(v6.domain, '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
    assert.equal(v6.type, 'PTR');
    assert.deepEqual(v6.records, [{ type: 'PTR', ttl: 1800, value: 'v6.example.test' }]);
  });

  test('input is trimmed, case-folded, a trailing dot accepted, IDN asked as punycode; type in any case', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const data = await lookup(built, { domain: '  Example.TEST.  ', type: 'mx' });
    assert.equal(data.domain, 'example.test');
    assert.equal(data.type, 'MX');
    assert.equal(data.records.length, 2);
    const idn = await lookup(built, { domain: 'Bücher.example.test' });
    assert.equal(idn.domain, 'xn--bcher-kva.example.test');
    assert.deepEqual(idn.records, [{ type: 'A', ttl: 60, address: '192.0.2.20' }]);
    assert.deepEqual(
      dns.queries.map((q) => [q.name, q.type]),
      [
        ['example.test', 'MX'],
        ['xn--bcher-kva.example.test', 'A'],
      ],
    );
  });

  test('no data: NOERROR with no records', async (t) => {
    const built = await app(t);
    const data = await lookup(built, { domain: '_sip._tcp.example.test', type: 'MX' });
    assert.equal(data.status, 'NOERROR');
    assert.deepEqual(data.records, []);
  });
});

describe('POST /api/dns/lookup: dnssec', () => {
  test('dnssec: true asks with the DO bit and reports the AD bit as authenticated', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const signed = await lookup(built, { domain: 'example.test', type: 'DS', dnssec: true });
    assert.equal(signed.authenticated, true);
    assert.equal(signed.records.length, 1);
    const unsigned = await lookup(built, { domain: 'plain.test', dnssec: true });
    assert.equal(unsigned.authenticated, false);
    assert.deepEqual(dns.queries.map((q) => q.dnssecOk), [true, true]);
  });

  test('without dnssec: no DO bit, no authenticated field', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const data = await lookup(built, { domain: 'example.test', type: 'DNSKEY' });
    assert.equal('authenticated' in data, false);
    assert.deepEqual(dns.queries.map((q) => q.dnssecOk), [false]);
  });

  test('bulk: the new types and dnssec apply to every name', async (t) => {
    const built = await app(t);
    const { status, body } = await post<Envelope<DnsResultBody[]>>(built, '/api/dns/lookup-bulk', { domains: ['example.test', 'plain.test'], type: 'https', dnssec: true });
    assert.equal(status, 200, JSON.stringify(body));
    assert.deepEqual(
      body.data.map((d) => [d.domain, d.type, d.records.length, d.authenticated]),
      [
        ['example.test', 'HTTPS', 1, true],
        ['plain.test', 'HTTPS', 0, false],
      ],
    );
  });

  test('dnssec must be a boolean', async (t) => {
    const built = await app(t);
    const body = await rejected(built, '/api/dns/lookup', { domain: 'example.test', dnssec: 'yes' }, 'dnssec: must be a boolean');
    assert.equal(body.details?.field, 'dnssec');
  });
});

describe('POST /api/dns/lookup: failures are 200s whose status says so', () => {
  test('NXDOMAIN', async (t) => {
    const built = await app(t);
    const data = await lookup(built, { domain: 'nope.example.test' });
    assert.equal(data.status, 'NXDOMAIN');
    assert.deepEqual(data.records, []);
    assert.equal(data.resolver, `127.0.0.1:${dns.port}`);
  });

  test('SERVFAIL and REFUSED (asked twice: the retry goes to the next server, here the same one)', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const servfail = await lookup(built, { domain: 'servfail.example.test' });
    assert.equal(servfail.status, 'SERVFAIL');
    assert.deepEqual(servfail.records, []);
    assert.equal(dns.count({ name: 'servfail.example.test' }), 2);
    const refused = await lookup(built, { domain: 'refused.example.test', type: 'TXT' });
    assert.equal(refused.status, 'REFUSED');
    // Failures are not cached: asking again asks the server again.
    await lookup(built, { domain: 'servfail.example.test' });
    assert.equal(dns.count({ name: 'servfail.example.test' }), 4);
  });

  test('a server that never answers: TIMEOUT after the configured 2 attempts', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const data = await lookup(built, { domain: 'silent.example.test' });
    assert.equal(data.status, 'TIMEOUT');
    assert.deepEqual(data.records, []);
    assert.equal(data.resolver, `127.0.0.1:${dns.port}`);
    assert.equal(dns.count({ name: 'silent.example.test' }), 2);
  });

  test('the retry goes to the next configured server', async (t) => {
    const silent = await startDnsServer({ behaviours: { '*': 'drop' } });
    t.after(() => silent.close());
    const built = await app(t, `127.0.0.1:${silent.port},127.0.0.1:${dns.port}`);
    const data = await lookup(built, { domain: 'example.test', type: 'AAAA' });
    assert.equal(data.status, 'NOERROR');
    assert.equal(data.resolver, `127.0.0.1:${dns.port}`);
    assert.deepEqual(data.records, [{ type: 'AAAA', ttl: 600, address: '2001:db8::10' }]);
    assert.equal(silent.count(), 1);
  });
});

describe('POST /api/dns/lookup: truncation and the cache', () => {
  test('a truncated UDP answer is asked again over TCP (TC bit)', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const data = await lookup(built, { domain: 'tc.example.test' });
    assert.deepEqual(data.records, [{ type: 'A', ttl: 77, address: '192.0.2.30' }]);
    assert.equal(dns.count({ name: 'tc.example.test', transport: 'udp' }), 1);
    assert.equal(dns.count({ name: 'tc.example.test', transport: 'tcp' }), 1);
  });

  test('an answer larger than the 1232-byte EDNS payload arrives whole over TCP', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const data = await lookup(built, { domain: 'big.example.test', type: 'TXT' });
    assert.equal(data.status, 'NOERROR');
    assert.deepEqual(
      data.records,
      Array.from({ length: 40 }, (_, i) => ({ type: 'TXT', ttl: 60, value: `record-${i}-${'x'.repeat(40)}` })),
    );
    assert.deepEqual(dns.queries.map((q) => [q.transport, q.ednsUdpSize]), [
      ['udp', 1232],
      ['tcp', null],
    ]);
  });

  test('a repeat lookup is answered from the cache without a query', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const first = await lookup(built, { domain: 'example.test', type: 'NS' });
    const second = await lookup(built, { domain: 'EXAMPLE.test.', type: 'ns' });
    assert.equal(first.cached, false);
    assert.equal(second.cached, true);
    assert.equal(dns.count({ name: 'example.test', type: 'NS' }), 1);
    assert.deepEqual(second.records.map((r) => r.value), ['ns1.example.test', 'ns2.example.test']);
    for (const r of second.records) assert.ok(r.ttl <= 86400 && r.ttl >= 86398, 'remaining TTL');
    // NXDOMAIN is cached too (negative caching, SOA minimum 30 s).
    await lookup(built, { domain: 'nope2.example.test' });
    assert.equal((await lookup(built, { domain: 'nope2.example.test' })).cached, true);
    assert.equal(dns.count({ name: 'nope2.example.test' }), 1);
  });
});

describe('POST /api/dns/lookup-bulk', () => {
  async function bulk(built: Built, json: unknown): Promise<DnsResultBody[]> {
    const { status, body } = await post<Envelope<DnsResultBody[]>>(built, '/api/dns/lookup-bulk', json);
    assert.equal(status, 200, JSON.stringify(body));
    return body.data;
  }

  test('answers in input order, each with its own status; duplicates looked up once', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const data = await bulk(built, {
      domains: ['www.example.test', 'nope.example.test', 'Example.Test.', 'servfail.example.test', 'example.test', '  EXAMPLE.test'],
    });
    assert.deepEqual(
      data.map((d) => [d.domain, d.type, d.status, d.records.length]),
      [
        ['www.example.test', 'A', 'NOERROR', 2],
        ['nope.example.test', 'A', 'NXDOMAIN', 0],
        ['example.test', 'A', 'NOERROR', 2],
        ['servfail.example.test', 'A', 'SERVFAIL', 0],
        ['example.test', 'A', 'NOERROR', 2],
        ['example.test', 'A', 'NOERROR', 2],
      ],
    );
    assert.equal(dns.count({ name: 'example.test', type: 'A' }), 1, 'a duplicate is asked once');
    assert.equal(dns.count({ name: 'www.example.test' }), 1);
  });

  test('type applies to every domain', async (t) => {
    const built = await app(t);
    const data = await bulk(built, { domains: ['example.test', '_sip._tcp.example.test'], type: 'srv' });
    assert.deepEqual(
      data.map((d) => [d.type, d.records]),
      [
        ['SRV', []],
        ['SRV', [{ type: 'SRV', ttl: 450, priority: 10, weight: 60, port: 5060, target: 'sip.example.test' }]],
      ],
    );
  });

  test('50 domains: every answer exact, each name asked once', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const domains = Array.from({ length: 50 }, (_, i) => `host${i}.bulk.test`);
    const data = await bulk(built, { domains });
    assert.equal(data.length, 50);
    data.forEach((d, i) => {
      assert.equal(d.domain, domains[i]);
      assert.deepEqual(d.records, [{ type: 'A', ttl: 100 + i, address: `198.51.100.${i}` }]);
    });
    assert.equal(dns.count(), 50);
  });

  test('a silent name does not hold back the others beyond its own TIMEOUT', async (t) => {
    const built = await app(t);
    const data = await bulk(built, { domains: ['silent.example.test', 'example.test'], type: 'AAAA' });
    assert.deepEqual(
      data.map((d) => d.status),
      ['TIMEOUT', 'NOERROR'],
    );
  });

  test('bounds: 51 entries, none, not an array, missing → 400 naming domains; no query sent', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const fiftyOne = Array.from({ length: 51 }, (_, i) => `host${i % 50}.bulk.test`);
    const body = await rejected(built, '/api/dns/lookup-bulk', { domains: fiftyOne }, 'domains: at most 50 entries');
    assert.equal(body.error, 'validation_error');
    assert.equal(body.details?.field, 'domains');
    await rejected(built, '/api/dns/lookup-bulk', { domains: [] }, 'domains: at least 1 entry');
    await rejected(built, '/api/dns/lookup-bulk', { domains: 'example.test' }, 'domains: must be an array');
    await rejected(built, '/api/dns/lookup-bulk', {}, 'domains: is required');
    await rejected(built, '/api/dns/lookup-bulk', { domains: ['example.test', 7] }, 'domains[1]: must be a string');
    assert.equal(dns.count(), 0);
  });

  // docs/api.md, "Bulk calls" (issue 24): an invalid entry was a 400 for the whole request.
  test('an invalid entry gets an item naming domains[i] and is never asked; the others are answered; a bad type is a 400', async (t) => {
    const built = await app(t);
    dns.resetLog();
    const { status, body } = await post<Envelope<Array<Record<string, unknown>>>>(built, '/api/dns/lookup-bulk', {
      domains: ['example.test', 'ok.example.test', 'bad..example.test', ''],
    });
    assert.equal(status, 200);
    assert.equal(body.data[0]!.status, 'NOERROR');
    assert.deepEqual(body.data[2], {
      domain: 'bad..example.test',
      type: 'A',
      error: 'domains[2]: must not contain an empty label (two dots in a row, or a leading dot)',
      error_code: 'validation_error',
    });
    assert.equal(body.data[3]!.error, 'domains[3]: must not be empty');
    assert.equal(dns.count({ name: 'bad..example.test' }), 0);
    dns.resetLog();
    await rejected(built, '/api/dns/lookup-bulk', { domains: ['example.test'], type: 'ANY' }, 'type: must be one of A, AAAA, MX, TXT, NS, CNAME, SOA, PTR, SRV, CAA, HTTPS, SVCB, DNSKEY, DS');
    assert.equal(dns.count(), 0);
  });
});

describe('reverse names of blocked ranges follow the target policy (issue 38)', () => {
  const REFUSED: Array<{ domain: string; type: string }> = [
    { domain: '10.9.9.9', type: 'PTR' },
    { domain: '9.9.9.10.In-Addr.Arpa.', type: 'ptr' },
    { domain: '::ffff:10.9.9.9', type: 'PTR' },
    { domain: 'fd00::1', type: 'PTR' },
    { domain: '10.in-addr.arpa', type: 'SOA' },
    { domain: 'd.f.ip6.arpa', type: 'NS' },
  ];

  test('a call is a 403 target_forbidden, as a job is before its 202; nothing is asked', async (t) => {
    const built = await app(t, undefined, '127.0.0.0/8');
    dns.resetLog();
    for (const json of REFUSED) {
      for (const headers of [{}, { prefer: 'respond-async' }] as Array<Record<string, string>>) {
        const res = await built.api('/api/dns/lookup', { json, headers });
        const body = (await res.json()) as ErrorEnvelope & { details: { type: string } };
        assert.equal(res.status, 403, `${JSON.stringify(json)} ${JSON.stringify(headers)}: ${JSON.stringify(body)}`);
        assert.equal(body.error, 'target_forbidden');
        assert.match(body.message, /is the reverse name of .* which is in the blocked (private|unique_local) range/);
        await assertMatchesOpenApi(built.app as FastifyInstance, 'POST', '/api/dns/lookup', 403, body);
      }
    }
    assert.equal(dns.count({ name: '9.9.9.10.in-addr.arpa' }), 0);
    assert.equal(dns.count(), 0, 'no reverse zone of the private ranges was asked');
  });

  test('bulk: each such entry is its item (target_forbidden), the others are answered', async (t) => {
    const built = await app(t, undefined, '127.0.0.0/8');
    dns.resetLog();
    const { status, body } = await post<Envelope<Array<Record<string, unknown>>>>(built, '/api/dns/lookup-bulk', {
      domains: ['8.8.8.8', '10.9.9.9', '9.9.9.10.in-addr.arpa', 'fd00::1', 'bad..name'],
      type: 'PTR',
    });
    assert.equal(status, 200);
    assert.deepEqual(
      body.data.map((item) => item.error_code ?? item.status),
      ['NXDOMAIN', 'target_forbidden', 'target_forbidden', 'target_forbidden', 'validation_error'],
    );
    assert.match(String(body.data[1]!.error), /^domains\[1\]: 9\.9\.9\.10\.in-addr\.arpa is the reverse name of 10\.9\.9\.9, which is in the blocked private range 10\.0\.0\.0\/8/);
    assert.equal(body.data[1]!.domain, '10.9.9.9', 'the entry as given');
    assert.equal(dns.count(), 1, 'only the public entry was asked');
  });

  test('a name whose CNAME leads into such a zone is refused too, single and in a bulk (its answer is not shown)', async (t) => {
    const built = await app(t, undefined, '127.0.0.0/8,192.0.2.0/24');
    const res = await post<ErrorEnvelope>(built, '/api/dns/lookup', { domain: 'into-private.evil.test', type: 'PTR' });
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.error, 'target_forbidden');
    assert.match(res.body.message, /^into-private\.evil\.test leads \(CNAME\) to 9\.9\.9\.10\.in-addr\.arpa, the reverse name of 10\.9\.9\.9, which is in the blocked private range 10\.0\.0\.0\/8/);
    assert.doesNotMatch(JSON.stringify(res.body), /internal\.test/);
    const { body } = await post<Envelope<Array<Record<string, unknown>>>>(built, '/api/dns/lookup-bulk', {
      domains: ['into-public.evil.test', 'into-private.evil.test'],
      type: 'PTR',
    });
    assert.deepEqual(body.data[0]!.records, [{ type: 'PTR', ttl: 3600, value: 'example.test' }], 'a CNAME into an allowed zone is answered');
    assert.equal(body.data[1]!.error_code, 'target_forbidden');
    assert.match(String(body.data[1]!.error), /^domains\[1\]: into-private\.evil\.test leads \(CNAME\) to /);
    assert.doesNotMatch(JSON.stringify(body), /internal\.test/);
  });

  test('NETDIAG_ALLOW_TARGETS opts a range back in: its reverse names are answered', async (t) => {
    const built = await app(t, undefined, '10.9.0.0/16,fd00::/8');
    const v4 = await lookup(built, { domain: '10.9.9.9', type: 'PTR' });
    assert.deepEqual(v4.records, [{ type: 'PTR', ttl: 60, value: 'internal.test' }]);
    const v6 = await lookup(built, { domain: 'fd00::1', type: 'PTR' });
    assert.deepEqual(v6.records, [{ type: 'PTR', ttl: 60, value: 'internal6.test' }]);
    const { body } = await post<Envelope<Array<Record<string, unknown>>>>(built, '/api/dns/lookup-bulk', { domains: ['10.9.9.9', '10.8.0.1'], type: 'PTR' });
    assert.deepEqual(body.data.map((item) => item.error_code ?? item.status), ['NOERROR', 'target_forbidden']);
  });
});

describe('POST /api/dns/lookup: bad input → 400 naming the field and the rule, before any query', () => {
  const bad: Array<[unknown, string]> = [
    [{}, 'domain: is required'],
    [{ domain: '' }, 'domain: must not be empty'],
    [{ domain: '   ' }, 'domain: must not be empty'],
    [{ domain: 42 }, 'domain: must be a string'],
    [{ domain: 'exa mple.test' }, 'domain: must be a domain name: " " is not allowed (letters, digits, hyphens and dots only)'],
    [{ domain: 'http://example.test/' }, 'domain: give a domain name, not a URL (example.test, not http://example.test/)'],
    [{ domain: 'a..example.test' }, 'domain: must not contain an empty label (two dots in a row, or a leading dot)'],
    [{ domain: '-bad.example.test' }, 'domain: label "-bad" must not start or end with a hyphen'],
    [{ domain: `${'a'.repeat(64)}.test` }, `domain: label "${'a'.repeat(20)}…" is longer than 63 characters`],
    [{ domain: `${'abcdefghi.'.repeat(26)}test` }, 'domain: must be at most 253 characters'],
    [{ domain: 'x'.repeat(301) }, 'domain: must be at most 300 characters'],
    [{ domain: '192.0.2.1' }, 'domain: must be a domain name, not an IP address (use type PTR for reverse lookups)'],
    [{ domain: 'example.test', type: 'HINFO' }, 'type: must be one of A, AAAA, MX, TXT, NS, CNAME, SOA, PTR, SRV, CAA, HTTPS, SVCB, DNSKEY, DS'],
    [{ domain: 'example.test', type: '' }, 'type: must be one of A, AAAA, MX, TXT, NS, CNAME, SOA, PTR, SRV, CAA, HTTPS, SVCB, DNSKEY, DS'],
    [{ domain: 'example.test', type: 1 }, 'type: must be a string'],
  ];
  test('each case', async (t) => {
    const built = await app(t);
    dns.resetLog();
    for (const [json, message] of bad) {
      const body = await rejected(built, '/api/dns/lookup', json, message);
      assert.equal(body.error, 'validation_error');
      assert.equal(body.details?.field, message.split(':')[0]);
    }
    assert.equal(dns.count(), 0);
  });

  test('underscores are allowed (service labels such as _dmarc)', async (t) => {
    const built = await app(t);
    const data = await lookup(built, { domain: '_dmarc.example.test', type: 'TXT' });
    assert.equal(data.domain, '_dmarc.example.test');
    assert.equal(data.status, 'NXDOMAIN');
  });
});

describe('POST /api/dns/lookup: a resolver that cannot be reached is UNREACHABLE, not TIMEOUT', () => {
  test('a closed UDP port on loopback: UNREACHABLE; a server answering REFUSED: REFUSED', async (t) => {
    const port = await closedUdpPort();
    const unreachable = await lookup(await app(t, `127.0.0.1:${port}`), { domain: 'example.test' });
    assert.equal(unreachable.status, 'UNREACHABLE');
    assert.deepEqual(unreachable.records, []);
    assert.equal(unreachable.resolver, `127.0.0.1:${port}`);
    const refusing = await startDnsServer({ behaviours: { '*': 'REFUSED' } });
    t.after(() => refusing.close());
    const refused = await lookup(await app(t, `127.0.0.1:${refusing.port}`), { domain: 'example.test' });
    assert.equal(refused.status, 'REFUSED');
  });
});
