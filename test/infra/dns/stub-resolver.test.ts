import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { after, before, describe, test } from 'node:test';
import { DnsCache } from '../../../src/infra/dns/cache.js';
import { DNS_MAX_ATTEMPT_TIMEOUT_MS } from '../../../src/infra/dns/defaults.js';
import { StubResolver } from '../../../src/infra/dns/stub-resolver.js';
import { startDnsServer, type DnsFixture, type FixtureRecord } from '../../fixtures/dns-server.js';
import { EXAMPLE_ZONE } from '../../fixtures/example-zone.js';

const ZONE: FixtureRecord[] = [
  ...EXAMPLE_ZONE,
  { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' },
  { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.11' },
];

let dns: DnsFixture;
before(async () => {
  dns = await startDnsServer({ records: ZONE });
});
after(() => dns.close());

/**
 * The attempt timeout where the fixture answers: far above its answer on a busy machine, which a
 * short one would turn into a TIMEOUT. Tests of a silent server set theirs.
 */
const LIVE_TIMEOUT_MS = 5_000;
/**
 * A test's give-up where the resolver would otherwise wait out a long timeout: a query that waits
 * for it (instead of failing over at once, or keeping to a shorter one asked) fails the test.
 */
const GIVE_UP = { timeout: 15_000 };

function client(opts: { timeoutMs?: number; cache?: DnsCache | null } = {}): StubResolver {
  return new StubResolver({ servers: [dns.server], timeoutMs: opts.timeoutMs ?? LIVE_TIMEOUT_MS, cache: opts.cache ?? null });
}

describe('record types', () => {
  test('A: every address with its TTL', async () => {
    const answer = await client().query('example.test', 'A');
    assert.equal(answer.status, 'NOERROR');
    assert.deepEqual(answer.records, [
      { type: 'A', ttl: 300, address: '192.0.2.10' },
      { type: 'A', ttl: 300, address: '192.0.2.11' },
    ]);
    assert.equal(answer.resolver, `127.0.0.1:${dns.port}`);
    assert.equal(answer.transport, 'udp');
    assert.equal(answer.cached, false);
    assert.equal(answer.error, null);
    assert.match(String(answer.responseTimeMs), /^\d+(\.\d{1,2})?$/);
  });

  test('AAAA', async () => {
    const answer = await client().query('example.test', 'AAAA');
    assert.deepEqual(answer.records, [{ type: 'AAAA', ttl: 600, address: '2001:db8::10' }]);
  });

  test('MX', async () => {
    const answer = await client().query('example.test', 'MX');
    assert.deepEqual(answer.records, [
      { type: 'MX', ttl: 900, priority: 10, exchange: 'mx1.example.test' },
      { type: 'MX', ttl: 900, priority: 20, exchange: 'mx2.example.test' },
    ]);
  });

  test('TXT: character-strings joined', async () => {
    const answer = await client().query('example.test', 'TXT');
    assert.deepEqual(answer.records, [{ type: 'TXT', ttl: 120, value: 'v=spf1 include:_spf.example.test -all' }]);
  });

  test('NS', async () => {
    const answer = await client().query('example.test', 'NS');
    assert.deepEqual(answer.records, [
      { type: 'NS', ttl: 86400, value: 'ns1.example.test' },
      { type: 'NS', ttl: 86400, value: 'ns2.example.test' },
    ]);
  });

  test('SOA', async () => {
    const answer = await client().query('example.test', 'SOA');
    assert.deepEqual(answer.records, [
      {
        type: 'SOA',
        ttl: 3600,
        nsname: 'ns1.example.test',
        hostmaster: 'hostmaster.example.test',
        serial: 2024010201,
        refresh: 7200,
        retry: 900,
        expire: 1209600,
        minttl: 30,
      },
    ]);
  });

  test('CNAME query returns the CNAME', async () => {
    const answer = await client().query('www.example.test', 'CNAME');
    assert.deepEqual(answer.records, [{ type: 'CNAME', ttl: 60, value: 'example.test' }]);
  });

  test('A through a CNAME returns only the A records', async () => {
    const answer = await client().query('www.example.test', 'A');
    assert.equal(answer.status, 'NOERROR');
    assert.deepEqual(
      answer.records.map((r) => r.address),
      ['192.0.2.10', '192.0.2.11'],
    );
  });

  test('PTR, SRV, CAA', async () => {
    const c = client();
    assert.deepEqual((await c.query('10.2.0.192.in-addr.arpa', 'PTR')).records, [{ type: 'PTR', ttl: 3600, value: 'example.test' }]);
    assert.deepEqual((await c.query('_sip._tcp.example.test', 'SRV')).records, [
      { type: 'SRV', ttl: 450, priority: 10, weight: 60, port: 5060, target: 'sip.example.test' },
    ]);
    assert.deepEqual((await c.query('example.test', 'CAA')).records, [
      { type: 'CAA', ttl: 3600, flags: 0, tag: 'issue', value: 'letsencrypt.org' },
    ]);
  });

  test('no data: NOERROR with no records', async () => {
    const answer = await client().query('_sip._tcp.example.test', 'MX');
    assert.equal(answer.status, 'NOERROR');
    assert.deepEqual(answer.records, []);
  });

  test('the query advertises EDNS(0) with a 1232-byte payload', async () => {
    dns.resetLog();
    await client().query('example.test', 'A');
    assert.equal(dns.queries[0]?.ednsUdpSize, 1232);
  });
});

describe('response codes', () => {
  test('NXDOMAIN', async () => {
    const answer = await client().query('missing.example.test', 'A');
    assert.equal(answer.status, 'NXDOMAIN');
    assert.deepEqual(answer.records, []);
  });

  test('SERVFAIL and REFUSED are reported after asking once more', async () => {
    dns.behave('servfail.example.test', 'SERVFAIL');
    dns.behave('refused.example.test', 'REFUSED');
    dns.resetLog();
    assert.equal((await client().query('servfail.example.test', 'A')).status, 'SERVFAIL');
    assert.equal((await client().query('refused.example.test', 'A')).status, 'REFUSED');
    // One server configured: the retry goes to it again.
    assert.equal(dns.count({ name: 'servfail.example.test' }), 2);
  });
});

describe('transport', () => {
  test('a truncated UDP answer is asked again over TCP', async () => {
    dns.resetLog();
    const answer = await client().query('big.example.test', 'TXT');
    assert.equal(answer.status, 'NOERROR');
    assert.equal(answer.transport, 'tcp');
    assert.equal(answer.records.length, 40);
    assert.equal(answer.records[39]?.value, `record-39-${'x'.repeat(40)}`);
    assert.equal(dns.count({ name: 'big.example.test', transport: 'udp' }), 1);
    assert.equal(dns.count({ name: 'big.example.test', transport: 'tcp' }), 1);
  });

  test('the TC bit alone forces TCP even for a small answer', async () => {
    dns.behave('example.test', 'truncate');
    try {
      dns.resetLog();
      const answer = await client().query('example.test', 'AAAA');
      assert.equal(answer.transport, 'tcp');
      assert.deepEqual(answer.records, [{ type: 'AAAA', ttl: 600, address: '2001:db8::10' }]);
      assert.equal(dns.count({ transport: 'tcp' }), 1);
    } finally {
      dns.behave('example.test', null);
    }
  });

  test('spoofed packets (wrong id, wrong question) are ignored', async () => {
    dns.behave('example.test', 'spoof-first');
    try {
      const answer = await client().query('example.test', 'A');
      assert.deepEqual(
        answer.records.map((r) => r.address),
        ['192.0.2.10', '192.0.2.11'],
      );
    } finally {
      dns.behave('example.test', null);
    }
  });

  test('query ids are random', async () => {
    dns.resetLog();
    const c = client();
    for (let i = 0; i < 5; i++) await c.query('example.test', 'A');
    assert.ok(new Set(dns.queries.map((q) => q.id)).size >= 4);
  });

  test('a server that never answers gives TIMEOUT after its attempts, each its configured time', GIVE_UP, async () => {
    const silent = await startDnsServer({ behaviours: { '*': 'drop' } });
    try {
      const c = new StubResolver({ servers: [silent.server], timeoutMs: 200, attempts: 2, cache: null });
      const started = Date.now();
      const answer = await c.query('example.test', 'A');
      const elapsed = Date.now() - started;
      assert.equal(answer.status, 'TIMEOUT');
      assert.deepEqual(answer.records, []);
      assert.match(answer.error ?? '', /no answer/);
      assert.equal(answer.resolver, `127.0.0.1:${silent.port}`);
      assert.ok(elapsed >= 380, `took ${elapsed} ms`);
      assert.equal(silent.count(), 2);
    } finally {
      await silent.close();
    }
  });

  test('fails over to the second server when the first is silent', async () => {
    const silent = await startDnsServer({ behaviours: { '*': 'drop' } });
    try {
      // The timeout both servers get: the first waits it out, the second must answer within it.
      const c = new StubResolver({ servers: [silent.server, dns.server], timeoutMs: 1_000, cache: null });
      const answer = await c.query('example.test', 'A');
      assert.equal(answer.status, 'NOERROR');
      assert.equal(answer.resolver, `127.0.0.1:${dns.port}`);
      assert.equal(answer.records.length, 2);
      assert.equal(silent.count(), 1);
    } finally {
      await silent.close();
    }
  });

  test('fails over when the first server refuses', async () => {
    const refusing = await startDnsServer({ behaviours: { '*': 'REFUSED' } });
    try {
      const c = new StubResolver({ servers: [refusing.server, dns.server], timeoutMs: LIVE_TIMEOUT_MS, cache: null });
      const answer = await c.query('example.test', 'A');
      assert.equal(answer.status, 'NOERROR');
      assert.equal(answer.resolver, `127.0.0.1:${dns.port}`);
    } finally {
      await refusing.close();
    }
  });

  test('a port with no server fails fast and fails over', GIVE_UP, async () => {
    // A bound-then-closed port: nothing listens, loopback answers with ICMP port unreachable.
    const probe = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => probe.bind(0, '127.0.0.1', resolve));
    const deadPort = probe.address().port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    // Fast: a wait for the first server's 30 s timeout would outlast the test's give-up.
    const c = new StubResolver({ servers: [{ host: '127.0.0.1', port: deadPort }, dns.server], timeoutMs: DNS_MAX_ATTEMPT_TIMEOUT_MS, cache: null });
    const answer = await c.query('example.test', 'A');
    assert.equal(answer.status, 'NOERROR');
  });

  test('options: servers and timeout per query', GIVE_UP, async () => {
    const silent = await startDnsServer({ behaviours: { '*': 'drop' } });
    try {
      // The client's own timeout outlasts the test's give-up: only the query's can end it in time.
      const c = new StubResolver({ servers: [silent.server], timeoutMs: DNS_MAX_ATTEMPT_TIMEOUT_MS, cache: null });
      const answer = await c.query('example.test', 'A', { servers: [dns.server] });
      assert.equal(answer.status, 'NOERROR');
      const timedOut = await c.query('example.test', 'A', { timeoutMs: 100, attempts: 1 });
      assert.equal(timedOut.status, 'TIMEOUT');
    } finally {
      await silent.close();
    }
  });

  test('bad names and options are programming errors, not queries', async () => {
    const c = client();
    await assert.rejects(c.query('a..b', 'A'), RangeError);
    await assert.rejects(c.query(`${'x'.repeat(64)}.test`, 'A'), RangeError);
    await assert.rejects(c.query('example.test', 'A', { timeoutMs: 0 }), RangeError);
    assert.throws(() => new StubResolver({ servers: [] }), RangeError);
  });
});

describe('cache', () => {
  function clock(): { now: () => number; advance: (ms: number) => void } {
    let t = 1_700_000_000_000;
    return { now: () => t, advance: (ms) => void (t += ms) };
  }

  test('a hit does not reach the server and reports remaining TTLs', async () => {
    const time = clock();
    const c = client({ cache: new DnsCache({ now: time.now }) });
    dns.resetLog();
    const first = await c.query('example.test', 'MX');
    assert.equal(first.cached, false);
    time.advance(10_500);
    const second = await c.query('EXAMPLE.test.', 'MX');
    assert.equal(dns.count(), 1);
    assert.equal(second.cached, true);
    assert.equal(second.transport, 'cache');
    assert.equal(second.resolver, `127.0.0.1:${dns.port}`);
    // TTL 900 capped to the 300 s cache lifetime does not change what is reported: 900 - 10.
    assert.deepEqual(
      second.records.map((r) => r.ttl),
      [890, 890],
    );
  });

  test('entries expire with the smallest TTL (CNAME chain included)', async () => {
    const time = clock();
    const c = client({ cache: new DnsCache({ now: time.now }) });
    dns.resetLog();
    await c.query('www.example.test', 'A'); // CNAME ttl 60, A ttl 300
    time.advance(59_000);
    await c.query('www.example.test', 'A');
    assert.equal(dns.count(), 1);
    time.advance(1_000);
    const fresh = await c.query('www.example.test', 'A');
    assert.equal(fresh.cached, false);
    assert.equal(dns.count(), 2);
  });

  test('positive TTLs are capped', async () => {
    const time = clock();
    const c = client({ cache: new DnsCache({ now: time.now, maxTtlS: 5 }) });
    dns.resetLog();
    await c.query('example.test', 'NS'); // ttl 86400
    time.advance(4_999);
    await c.query('example.test', 'NS');
    time.advance(1);
    await c.query('example.test', 'NS');
    assert.equal(dns.count(), 2);
  });

  test('NXDOMAIN is cached for min(SOA ttl, SOA minimum)', async () => {
    const time = clock();
    const c = client({ cache: new DnsCache({ now: time.now }) });
    dns.resetLog();
    await c.query('nothing.example.test', 'A');
    time.advance(29_000);
    const cached = await c.query('nothing.example.test', 'A');
    assert.equal(cached.status, 'NXDOMAIN');
    assert.equal(cached.cached, true);
    time.advance(1_000);
    await c.query('nothing.example.test', 'A');
    assert.equal(dns.count(), 2);
  });

  test('TIMEOUT and SERVFAIL are not cached', async () => {
    const time = clock();
    const c = new StubResolver({ servers: [dns.server], timeoutMs: LIVE_TIMEOUT_MS, attempts: 1, cache: new DnsCache({ now: time.now }) });
    dns.behave('flaky.example.test', 'drop');
    dns.behave('servfail.example.test', 'SERVFAIL');
    dns.resetLog();
    // A short timeout only for the queries that are dropped.
    assert.equal((await c.query('flaky.example.test', 'A', { timeoutMs: 100 })).status, 'TIMEOUT');
    assert.equal((await c.query('flaky.example.test', 'A', { timeoutMs: 100 })).status, 'TIMEOUT');
    assert.equal((await c.query('servfail.example.test', 'A')).status, 'SERVFAIL');
    assert.equal((await c.query('servfail.example.test', 'A')).status, 'SERVFAIL');
    assert.equal(dns.count(), 4);
    dns.behave('flaky.example.test', null);
  });

  test('cache: false bypasses the cache', async () => {
    const c = client({ cache: new DnsCache() });
    dns.resetLog();
    await c.query('example.test', 'A');
    await c.query('example.test', 'A', { cache: false });
    assert.equal(dns.count(), 2);
  });

  test('different server sets do not share entries', async () => {
    const other = await startDnsServer({ records: ZONE });
    try {
      const c = new StubResolver({ servers: [dns.server], cache: new DnsCache() });
      await c.query('example.test', 'A');
      const viaOther = await c.query('example.test', 'A', { servers: [other.server] });
      assert.equal(viaOther.cached, false);
      assert.equal(other.count(), 1);
    } finally {
      await other.close();
    }
  });

  test('identical queries in flight share one exchange', async () => {
    dns.behave('example.test', { delayMs: 50 });
    try {
      const c = client();
      dns.resetLog();
      const answers = await Promise.all([c.query('example.test', 'A'), c.query('example.test', 'A'), c.query('example.test', 'A')]);
      assert.equal(dns.count(), 1);
      assert.ok(answers.every((a) => a.records.length === 2));
    } finally {
      dns.behave('example.test', null);
    }
  });
});
