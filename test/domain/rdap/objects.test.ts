import assert from 'node:assert/strict';
import { test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { BootstrapRegistry, parseBootstrap, snapshot } from '../../../src/domain/rdap/bootstrap.js';
import { urlsForAddress, urlsForAsn, urlsForDomain } from '../../../src/domain/rdap/bootstrap.js';
import { decodeAnswer } from '../../../src/domain/rdap/decode.js';
import { RDAP_MAX_ENTITIES, RDAP_MAX_FIELD_CHARS } from '../../../src/domain/rdap/defaults.js';
import { entitiesOf, eppStatus, rangeToCidrs, readDomain, readJcard, readNetwork } from '../../../src/domain/rdap/objects.js';
import { parseAsn } from '../../../src/domain/rdap/query.js';
import type { BootstrapSource } from '../../../src/domain/rdap/types.js';

const enc = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

test('bootstrap: longest suffix for names, longest prefix for addresses, narrowest AS range; https first', () => {
  const dns = parseBootstrap(
    'dns',
    JSON.stringify({ services: [[['uk'], ['http://a.test/uk/', 'https://a.test/uk/']], [['co.uk'], ['https://b.test/co']], [['com'], ['ftp://x.test/', 'https://c.test/com/v1']]] }),
    'test',
  );
  assert.deepEqual(urlsForDomain(dns, 'example.co.uk'), ['https://b.test/co/']);
  assert.deepEqual(urlsForDomain(dns, 'example.org.uk'), ['https://a.test/uk/', 'http://a.test/uk/']);
  assert.deepEqual(urlsForDomain(dns, 'EXAMPLE.COM'), ['https://c.test/com/v1/']);
  assert.equal(urlsForDomain(dns, 'example.de'), null);
  const v4 = parseBootstrap('ipv4', JSON.stringify({ services: [[['8.0.0.0/8'], ['https://arin.test/']], [['8.8.0.0/16'], ['https://narrow.test/']], [['2001:db8::/32', 'junk', 7], ['https://x.test/']]] }), 'test');
  assert.deepEqual(urlsForAddress(v4, ipaddr.parse('8.8.8.8')), ['https://narrow.test/']);
  assert.deepEqual(urlsForAddress(v4, ipaddr.parse('8.1.1.1')), ['https://arin.test/']);
  assert.equal(urlsForAddress(v4, ipaddr.parse('2001:db8::1')), null, 'an IPv6 block in ipv4.json is not used');
  const asn = parseBootstrap('asn', JSON.stringify({ services: [[['1-100000'], ['https://wide.test/']], [['15169'], ['https://one.test/']], [['9-3'], ['https://bad.test/']]] }), 'test');
  assert.deepEqual(urlsForAsn(asn, 15169), ['https://one.test/']);
  assert.deepEqual(urlsForAsn(asn, 5), ['https://wide.test/']);
  assert.equal(urlsForAsn(asn, 200000), null);
});

test('bootstrap: what is no bootstrap file is refused; the shipped snapshot covers the main TLDs and the five RIRs', () => {
  assert.throws(() => parseBootstrap('dns', '[]', 't'), /no "services" array/);
  assert.throws(() => parseBootstrap('dns', '{"services":', 't'), /not valid JSON/);
  assert.deepEqual(parseBootstrap('dns', JSON.stringify({ services: [7, [[], []], [['x'], 'nope'], [{}, ['https://a.test/']]] }), 't').names.size, 0);
  assert.deepEqual(urlsForDomain(snapshot('dns'), 'example.com'), ['https://rdap.verisign.com/com/v1/']);
  assert.deepEqual(urlsForDomain(snapshot('dns'), 'example.co.uk'), ['https://rdap.nominet.uk/uk/']);
  assert.equal(urlsForDomain(snapshot('dns'), 'example.de'), null);
  const rirs = new Set<string>();
  for (const ip of ['8.8.8.8', '193.0.6.139', '1.1.1.1', '200.160.2.3', '196.216.2.1']) rirs.add(new URL(urlsForAddress(snapshot('ipv4'), ipaddr.parse(ip))![0]!).host);
  assert.deepEqual([...rirs].sort(), ['rdap.afrinic.net', 'rdap.apnic.net', 'rdap.arin.net', 'rdap.db.ripe.net', 'rdap.lacnic.net']);
  assert.deepEqual(urlsForAddress(snapshot('ipv6'), ipaddr.parse('2001:4860:4860::8888')), ['https://rdap.arin.net/registry/', 'http://rdap.arin.net/registry/']);
  assert.deepEqual(urlsForAsn(snapshot('asn'), 15169), ['https://rdap.arin.net/registry/', 'http://rdap.arin.net/registry/']);
  assert.deepEqual(urlsForAsn(snapshot('asn'), 3320), ['https://rdap.db.ripe.net/']);
});

test('bootstrap registry: fetched once a day; a failed fetch uses the snapshot and is retried later', async () => {
  let now = 0;
  let fetches = 0;
  let fail = false;
  const source: BootstrapSource = {
    where: 'memory',
    fetch: async () => {
      fetches++;
      if (fail) throw new Error('unreachable');
      return JSON.stringify({ services: [[['test'], [`https://v${fetches}.test/`]]] });
    },
  };
  const errors: string[] = [];
  const registry = new BootstrapRegistry({ source, now: () => now, ttlMs: 1000, retryMs: 100, onFetchError: (kind) => errors.push(kind) });
  const [a, b] = await Promise.all([registry.file('dns'), registry.file('dns')]);
  assert.equal(a, b, 'concurrent callers share one fetch');
  assert.equal(fetches, 1);
  now = 999;
  assert.equal((await registry.file('dns')).origin, 'memory');
  assert.equal(fetches, 1);
  now = 1000;
  fail = true;
  const kept = await registry.file('dns');
  assert.deepEqual(urlsForDomain(kept, 'x.test'), ['https://v1.test/'], 'the last good file is kept when a refresh fails');
  assert.deepEqual(errors, ['dns']);
  now = 1050;
  await registry.file('dns');
  assert.equal(fetches, 2, 'not retried before retryMs');
  const fresh = new BootstrapRegistry({ source, now: () => now });
  assert.equal((await fresh.file('dns')).origin, 'snapshot', 'no good file yet: the snapshot');
});

test('jCard and entities: every value type-checked, lists and nesting bounded', () => {
  assert.deepEqual(readJcard(['vcard', [['fn', {}, 'text', 'A'], ['org', {}, 'text', ['Org', 'Unit']], ['email', {}, 'text', 7], ['email', {}, 'text', 'x@y.test'], 'junk', [1, 2]]]), { fn: 'A', org: 'Org', email: 'x@y.test', url: null });
  assert.deepEqual(readJcard({ vcard: true }), { fn: null, org: null, email: null, url: null });
  assert.deepEqual(readJcard(['vcard', [['fn', {}, 'text', 'x'.repeat(5000)]]]).fn!.length, RDAP_MAX_FIELD_CHARS);
  // A chain of nested entities: read three levels deep, no more.
  let chain: Record<string, unknown> = { roles: ['abuse'], vcardArray: ['vcard', [['email', {}, 'text', 'deep@x.test']]] };
  for (let i = 0; i < 10; i++) chain = { roles: ['registrant'], entities: [chain] };
  assert.equal(entitiesOf({ entities: [chain] }).length, 3);
  const many = { entities: Array.from({ length: 1000 }, () => ({ roles: ['technical'] })) };
  assert.equal(entitiesOf(many).length, RDAP_MAX_ENTITIES);
  assert.deepEqual(entitiesOf({ entities: 'no' }), []);
  assert.deepEqual(entitiesOf({ entities: [null, 5, { roles: 'registrar' }] }).map((e) => e.roles), [[]]);
});

test('domain and network objects of the wrong shapes: nulls, never a throw', () => {
  const odd = { ldhName: 5, port43: ['x'], status: 'active', nameservers: [{ ldhName: 'NS1.X.TEST.' }, 'ns2', { ldhName: null }], events: [{ eventAction: 'registration', eventDate: 'yesterday' }], secureDNS: { delegationSigned: 'yes' }, links: [{ rel: 'related', href: 'javascript:alert(1)', type: 'application/rdap+json' }], __proto__: { ldhName: 'evil.test' } };
  const d = readDomain(JSON.parse(JSON.stringify(odd)) as Record<string, unknown>);
  assert.deepEqual([d.domain, d.whois_server, d.status, d.name_servers, d.creation_date, d.dnssec, d.related], [null, null, [], ['ns1.x.test'], null, null, null]);
  const n = readNetwork({ startAddress: '10.0.0.0', endAddress: '10.0.2.255', country: 'Netherlands', startAutnum: -1, cidr0_cidrs: [{ v4prefix: '10.0.0.0', length: 99 }] });
  assert.deepEqual([n.cidr, n.country, n.asn_range], [['10.0.0.0/23', '10.0.2.0/24'], null, null]);
  assert.deepEqual(decodeAnswer(enc('[1,2]'), 'domain').error, 'the answer is no JSON object');
  assert.deepEqual(decodeAnswer(enc('{"a":'), 'domain').error, 'not valid JSON');
  assert.match(decodeAnswer(enc('['.repeat(40) + ']'.repeat(40)), 'network').error!, /nested more than 32 levels/);
});

test('ranges to CIDR blocks, RDAP statuses as EPP codes, AS numbers', () => {
  assert.deepEqual(rangeToCidrs(ipaddr.parse('192.0.2.0'), ipaddr.parse('192.0.2.255')), ['192.0.2.0/24']);
  assert.deepEqual(rangeToCidrs(ipaddr.parse('0.0.0.0'), ipaddr.parse('255.255.255.255')), ['0.0.0.0/0']);
  assert.deepEqual(rangeToCidrs(ipaddr.parse('2001:db8::'), ipaddr.parse('2001:db8:0:1:ffff:ffff:ffff:ffff')), ['2001:db8::/63']);
  assert.equal(rangeToCidrs(ipaddr.parse('0.0.0.1'), ipaddr.parse('255.255.255.254')).length, 32, 'bounded');
  assert.deepEqual(['client transfer prohibited', 'active', 'server_hold', 'pending delete'].map(eppStatus), ['clientTransferProhibited', 'ok', 'serverHold', 'pendingDelete']);
  assert.deepEqual([15169, '15169', 'AS15169', ' as15169 ', 0, 4294967295].map((v) => parseAsn(v)), [15169, 15169, 15169, 15169, 0, 4294967295]);
  for (const bad of [-1, 1.5, 4294967296, 'AS', 'AS-1', '0x10', '15169a', '', null]) assert.throws(() => parseAsn(bad), /asn: must be an AS number/, String(bad));
});
