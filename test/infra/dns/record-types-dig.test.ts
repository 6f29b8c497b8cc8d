import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { DnsRecord, DnsRecordType } from '../../../src/domain/dns/client.js';
import { DnsCache } from '../../../src/infra/dns/cache.js';
import { StubResolver } from '../../../src/infra/dns/stub-resolver.js';
import { decodeSvcb } from '../../../src/infra/dns/svcb.js';
import { startDnsServer, type DnsFixture, type FixtureRecord } from '../../fixtures/dns-server.js';
import { EXAMPLE_ZONE } from '../../fixtures/example-zone.js';
import { alpn, ipv4, ipv6, SVC_KEYS as K, svcbRdata, svcbRecord, u16 } from '../../fixtures/svcb.js';

/**
 * The record types of issue 27 (PTR, SRV, CAA, HTTPS, SVCB, DNSKEY, DS) read by the stub resolver
 * and by dig (BIND 9.18, bind9-dnsutils) from the same loopback server: every record must say
 * what dig says, field by field, escapes included. And `dnssec`: the DO bit on the wire, and
 * `authenticated` following the AD bit of the answer as dig reports it.
 */

const run = promisify(execFile);
/** The comparisons need dig on PATH (Debian: bind9-dnsutils); without it they are skipped, not failed. */
const noDig = spawnSync('dig', ['-v']).error ? 'dig not found (bind9-dnsutils)' : false;

/** Every SvcParam form dig knows, and the escapes of the quoted ones (alpn, unknown keys). */
const FULL_HTTPS = svcbRecord('HTTPS', 'svc.example.test', 300, 1, '.', [
  [K.mandatory, u16(K.alpn, K.port)],
  [K.alpn, alpn('h2', 'h3', 'a,b', 'q"x\\y z', ';@()$\x7f.~')],
  [K.noDefaultAlpn, Buffer.alloc(0)],
  [K.port, u16(8443)],
  [K.ipv4hint, ipv4('192.0.2.1', '192.0.2.2')],
  [K.ech, Buffer.from('an ECHConfigList')],
  [K.ipv6hint, ipv6('2001:db8::1', '2001:db8:0:0:1::2')],
  [K.dohpath, Buffer.from('/dns-query{?dns}')],
  [8, Buffer.alloc(0)],
  [65000, Buffer.from([1, 2, 0x41, 0x22, 0x20, 0xff, 0x5c, 0x3b, 0x2c, 0x7f])],
]);

const ZONE: FixtureRecord[] = [
  ...EXAMPLE_ZONE,
  FULL_HTTPS,
  svcbRecord('HTTPS', 'svc.example.test', 300, 2, 'fallback.example.test', [[K.alpn, alpn('h2')]]),
  svcbRecord('HTTPS', 'alias.example.test', 600, 0, 'cdn.example.net'),
  svcbRecord('SVCB', '_dns.resolver.example.test', 120, 1, 'dns.example.test', [[K.alpn, alpn('dot', 'doq')], [K.port, u16(853)]]),
  { name: 'example.test', type: 'DNSKEY', ttl: 3600, data: { flags: 257, algorithm: 13, key: Buffer.alloc(64, 0x5a) } },
  { name: 'example.test', type: 'DNSKEY', ttl: 3600, data: { flags: 256, algorithm: 8, key: Buffer.from(Array.from({ length: 260 }, (_, i) => i & 0xff)) } },
  { name: 'example.test', type: 'DS', ttl: 86400, data: { keyTag: 2371, algorithm: 13, digestType: 2, digest: Buffer.from('0123456789abcdeffedcba98765432100123456789abcdeffedcba9876543210', 'hex') } },
  { name: 'example.test', type: 'DS', ttl: 86400, data: { keyTag: 60485, algorithm: 5, digestType: 1, digest: Buffer.alloc(20, 0xc3) } },
  // Protocol 4 (RFC 4034 says 3): dns-packet's own decoder refuses the whole message; dig prints it.
  { name: 'oddkey.example.test', type: 'UNKNOWN_48', ttl: 300, data: Buffer.from([1, 1, 4, 15, 0xde, 0xad, 0xbe, 0xef]) } as unknown as FixtureRecord,
  // Malformed: a port of three bytes. Dropped from the answer, never a throw.
  { name: 'bad-svcb.example.test', type: 'UNKNOWN_65', ttl: 60, data: svcbRdata(1, '.', [[K.port, Buffer.from([1, 2, 3])]]) } as unknown as FixtureRecord,
  { name: 'insecure.test', type: 'A', ttl: 60, data: '192.0.2.77' },
];

let dns: DnsFixture;
before(async () => {
  dns = await startDnsServer({ records: ZONE, secure: ['example.test'] });
});
after(() => dns.close());

function client(cache: DnsCache | null = null): StubResolver {
  return new StubResolver({ servers: [dns.server], timeoutMs: 2000, cache });
}

async function dig(name: string, type: string, ...flags: string[]): Promise<string> {
  const { stdout } = await run('dig', [`@${dns.host}`, '-p', String(dns.port), '+nosplit', '+nocookie', '+tries=1', '+time=2', ...flags, name, type]);
  return stdout;
}

/** dig's answer section as [ttl, rdata] pairs, in order. */
async function digAnswers(name: string, type: string): Promise<Array<[number, string]>> {
  const out = await dig(name, type, '+noall', '+answer');
  return out
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const fields = line.split(/\s+/);
      assert.equal(fields[3], type, line);
      return [Number(fields[1]), fields.slice(4).join(' ')];
    });
}

/** dig names keys 7 and 8 by number: BIND 9.18 predates dohpath (RFC 9461) and ohttp (RFC 9540). */
const DIG_918_KEYS: Record<string, string> = { dohpath: 'key7', ohttp: 'key8' };
/** Values dig writes in quotes: lists of strings and opaque values. */
const QUOTED = (key: string): boolean => key === 'alpn' || key === 'dohpath' || /^key\d+$/.test(key);

/** One of our records written the way dig prints its RDATA. */
function asDig(record: DnsRecord): string {
  const fqdn = (n: string): string => (n === '.' ? '.' : `${n}.`);
  switch (record.type) {
    case 'PTR':
      return fqdn(record.value);
    case 'SRV':
      return `${record.priority} ${record.weight} ${record.port} ${fqdn(record.target)}`;
    case 'CAA':
      return `${record.flags} ${record.tag} "${record.value}"`;
    case 'HTTPS':
    case 'SVCB': {
      const params = Object.entries(record.params).map(([key, value]) => {
        const shown = DIG_918_KEYS[key] ?? key;
        if (value === '') return shown;
        return QUOTED(key) ? `${shown}="${value}"` : `${shown}=${value}`;
      });
      return [String(record.priority), fqdn(record.target), ...params].join(' ');
    }
    case 'DNSKEY':
      return `${record.flags} ${record.protocol} ${record.algorithm} ${record.key}`;
    case 'DS':
      return `${record.key_tag} ${record.algorithm} ${record.digest_type} ${record.digest}`;
    default:
      throw new Error(`no dig form for ${record.type}`);
  }
}

describe('each new record type agrees with dig against the same server', () => {
  const cases: Array<[string, DnsRecordType, number]> = [
    ['10.2.0.192.in-addr.arpa', 'PTR', 1],
    ['_sip._tcp.example.test', 'SRV', 1],
    ['example.test', 'CAA', 1],
    ['svc.example.test', 'HTTPS', 2],
    ['alias.example.test', 'HTTPS', 1],
    ['_dns.resolver.example.test', 'SVCB', 1],
    ['example.test', 'DNSKEY', 2],
    ['example.test', 'DS', 2],
    ['oddkey.example.test', 'DNSKEY', 1],
  ];
  for (const [name, type, count] of cases) {
    test(`${type} ${name}`, { skip: noDig }, async () => {
      const ours = await client().query(name, type);
      assert.equal(ours.status, 'NOERROR');
      assert.equal(ours.records.length, count);
      const theirs = await digAnswers(name, type);
      assert.deepEqual(
        ours.records.map((r) => [r.ttl, asDig(r)]),
        theirs,
      );
    });
  }

  test('HTTPS: every SvcParam as a field of params', async () => {
    const [full] = (await client().query('svc.example.test', 'HTTPS')).records;
    assert.deepEqual(full, {
      type: 'HTTPS',
      ttl: 300,
      priority: 1,
      target: '.',
      params: {
        mandatory: 'alpn,port',
        alpn: 'h2,h3,a\\\\,b,q\\"x\\\\\\\\y\\032z,;@()$\\127.~',
        'no-default-alpn': '',
        port: '8443',
        ipv4hint: '192.0.2.1,192.0.2.2',
        ech: Buffer.from('an ECHConfigList').toString('base64'),
        ipv6hint: '2001:db8::1,2001:db8::1:0:0:2',
        dohpath: '/dns-query{?dns}',
        ohttp: '',
        key65000: '\\001\\002A\\" \\255\\\\;,\\127',
      },
    });
  });

  test('a malformed HTTPS record is left out of the answer, as dig refuses it', async () => {
    const ours = await client().query('bad-svcb.example.test', 'HTTPS');
    assert.equal(ours.status, 'NOERROR');
    assert.deepEqual(ours.records, []);
  });
});

describe('decodeSvcb on hostile RDATA', () => {
  const valid = svcbRdata(1, 'a.example.test', [
    [K.alpn, alpn('h2', 'h3')],
    [K.port, u16(443)],
    [K.ipv6hint, ipv6('2001:db8::1')],
  ]);

  test('every truncation of a valid RDATA is null, never a throw', () => {
    for (let n = 0; n < valid.length; n++) {
      const cut = decodeSvcb(valid.subarray(0, n));
      // A cut exactly between two params is a shorter, valid record.
      if (cut !== null) assert.ok(Object.keys(cut.params).length < 3, `prefix of ${n} bytes`);
    }
    assert.deepEqual(decodeSvcb(valid), { priority: 1, target: 'a.example.test', params: { alpn: 'h2,h3', port: '443', ipv6hint: '2001:db8::1' } });
  });

  test('keys out of order, repeated, or a compressed target are refused', () => {
    assert.equal(decodeSvcb(svcbRdata(1, '.', [[K.port, u16(1)], [K.alpn, alpn('h2')]])), null);
    assert.equal(decodeSvcb(svcbRdata(1, '.', [[K.port, u16(1)], [K.port, u16(2)]])), null);
    assert.equal(decodeSvcb(Buffer.from([0, 1, 0xc0, 0x0c])), null);
    assert.equal(decodeSvcb(svcbRdata(1, '.', [[K.alpn, Buffer.from([5, 0x68])]])), null);
    assert.equal(decodeSvcb(svcbRdata(1, '.', [[K.ipv4hint, Buffer.from([192, 0, 2])]])), null);
  });

  test('a largest RDATA of one-byte unknown params decodes whole', () => {
    const params = Array.from({ length: 13_000 }, (_, i): [number, Buffer] => [i + 10, Buffer.from([i & 0x7f])]);
    const decoded = decodeSvcb(svcbRdata(1, '.', params));
    assert.equal(Object.keys(decoded?.params ?? {}).length, 13_000);
  });
});

describe('dnssec: the DO bit asked, the AD bit reported', () => {
  test('without dnssec the query carries no DO bit and nothing is authenticated', async () => {
    dns.resetLog();
    const answer = await client().query('example.test', 'DS');
    assert.equal(answer.authenticated, false);
    assert.deepEqual(dns.queries.map((q) => q.dnssecOk), [false]);
  });

  test('with dnssec the DO bit is sent and authenticated follows AD as dig sees it', { skip: noDig }, async () => {
    for (const name of ['example.test', 'insecure.test']) {
      dns.resetLog();
      const answer = await client().query(name, 'A', { dnssec: true });
      assert.deepEqual(dns.queries.map((q) => q.dnssecOk), [true]);
      const digFlags = /;; flags: ([a-z ]+);/.exec(await dig(name, 'A', '+dnssec', '+noall', '+comments'))?.[1]?.split(' ') ?? [];
      assert.ok(digFlags.includes('qr'), `dig got an answer for ${name}`);
      assert.equal(answer.authenticated, digFlags.includes('ad'), name);
      assert.equal(answer.authenticated, name === 'example.test');
    }
  });

  test('the DO bit goes over TCP too after a truncated answer', async () => {
    dns.resetLog();
    const answer = await client().query('big.example.test', 'TXT', { dnssec: true });
    assert.equal(answer.transport, 'tcp');
    assert.equal(answer.authenticated, true);
    assert.deepEqual(dns.queries.map((q) => [q.transport, q.dnssecOk]), [['udp', true], ['tcp', true]]);
  });

  test('answers with and without DO are cached apart', async () => {
    const cached = client(new DnsCache());
    dns.resetLog();
    assert.equal((await cached.query('example.test', 'DNSKEY')).authenticated, false);
    assert.equal((await cached.query('example.test', 'DNSKEY', { dnssec: true })).authenticated, true);
    const again = await cached.query('example.test', 'DNSKEY', { dnssec: true });
    assert.equal(again.cached, true);
    assert.equal(again.authenticated, true);
    assert.equal(dns.count({ name: 'example.test', type: 'DNSKEY' }), 2);
  });
});
