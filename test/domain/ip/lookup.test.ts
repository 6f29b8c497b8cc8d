/**
 * IP lookup with the real readers on the shipped data, and a real DNS server on loopback
 * playing the Tor exit list, DNSBL zones and PTR records. Nothing leaves 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ipaddr from 'ipaddr.js';
import { ValidationError } from '../../../src/errors.js';
import { StubResolver } from '../../../src/infra/dns/stub-resolver.js';
import { createGeoReader } from '../../../src/infra/geoip/index.js';
import { createHostingList } from '../../../src/domain/ip/hosting.js';
import type { LoadableGeoReader } from '../../../src/domain/ip/geoip.js';
import {
  IP_BULK_MAX,
  lookupBulk,
  lookupIp,
  scoreRisk,
  TOR_DNSEL_ZONE,
  type DnsQuerier,
  type IpLookupDeps,
  type IpLookupResult,
} from '../../../src/domain/ip/index.js';
import { startDnsServer, type DnsFixture } from '../../fixtures/dns-server.js';

const BL = 'bl.example.test';
const ZEN = 'zen.spamhaus.org';
/** The DNS checks' deadline where the fixture answers: its answers come long before it, however busy the machine. */
const LIVE_DEADLINE_MS = 10_000;
/** The deadline of the tests where SLOW_IP's questions never get an answer: only it ends them. */
const DEADLINE_MS = 400;
/** A test's give-up: a lookup the deadline does not end fails the test instead of hanging it. */
const GIVE_UP = { timeout: 15_000 };

// Public addresses with distinct roles in the DNS fixture.
const TOR_IP = '185.220.101.5';
const CLEAN_IP = '8.8.8.8';
const PBL_IP = '81.2.69.142';
const XBL_IP = '5.188.10.3';
const SLOW_IP = '9.9.9.9';
const ERRCODE_IP = '77.88.8.8';
const INTO_PRIVATE_IP = '1.0.0.2';
const CLASSLESS_IP = '1.0.0.3';

const rev = (ip: string): string => ip.split('.').reverse().join('.');
const nibbles = (ip: string): string =>
  [...ipaddr.IPv6.parse(ip).parts.map((p) => p.toString(16).padStart(4, '0')).join('')].reverse().join('.');
const GOOGLE_V6 = '2001:4860:4860::8888';

let geo: LoadableGeoReader;
let dns: DnsFixture;
let client: StubResolver;
let deps: IpLookupDeps;

before(async () => {
  geo = createGeoReader();
  dns = await startDnsServer({
    records: [
      { name: `${rev(TOR_IP)}.${TOR_DNSEL_ZONE}`, type: 'A', ttl: 60, data: '127.0.0.2' },
      { name: `${rev(TOR_IP)}.${BL}`, type: 'A', ttl: 60, data: '127.0.0.2' },
      { name: `${rev(PBL_IP)}.${ZEN}`, type: 'A', ttl: 60, data: '127.0.0.10' },
      { name: `${rev(XBL_IP)}.${ZEN}`, type: 'A', ttl: 60, data: '127.0.0.4' },
      { name: `${rev(ERRCODE_IP)}.${ZEN}`, type: 'A', ttl: 60, data: '127.255.255.254' },
      { name: `${rev(CLEAN_IP)}.in-addr.arpa`, type: 'PTR', ttl: 60, data: 'dns.google.' },
      // A public address's reverse zone leading (CNAME) into the operator's private one, and
      // one leading into a public classless delegation (RFC 2317).
      { name: `${rev(INTO_PRIVATE_IP)}.in-addr.arpa`, type: 'CNAME', ttl: 60, data: '9.9.9.10.in-addr.arpa' },
      { name: '9.9.9.10.in-addr.arpa', type: 'PTR', ttl: 60, data: 'internal.test.' },
      { name: `${rev(CLASSLESS_IP)}.in-addr.arpa`, type: 'CNAME', ttl: 60, data: '3.0-25.0.0.1.in-addr.arpa' },
      { name: '3.0-25.0.0.1.in-addr.arpa', type: 'PTR', ttl: 60, data: 'classless.example.' },
      {
        name: `${nibbles(GOOGLE_V6)}.ip6.arpa`,
        type: 'PTR',
        ttl: 60,
        data: 'dns.google.',
      },
    ],
  });
  dns.behave(`${rev(SLOW_IP)}.${BL}`, 'drop');
  dns.behave(`${rev(SLOW_IP)}.in-addr.arpa`, 'drop');
  dns.behave(`${rev(SLOW_IP)}.${TOR_DNSEL_ZONE}`, 'SERVFAIL');
  client = new StubResolver({ servers: [dns.server], cache: null });
  // The real client fits the structural interface the domain declares.
  const querier: DnsQuerier = client;
  deps = {
    geo,
    dns: querier,
    dnsblZones: [BL, ZEN],
    ptrTimeoutMs: LIVE_DEADLINE_MS,
    securityTimeoutMs: LIVE_DEADLINE_MS,
  };
  await geo.load();
});

after(() => dns.close());

/**
 * `deps` whose DNS never answers a question about SLOW_IP (the fixture's other answers come as
 * usual), under `deadlineMs`. With `honourTimeout`, such a question fails after the timeout the
 * lookup asks of it, as a real client's would; without, it never settles, and only the lookup's
 * own deadline can end it. `pending.max`: the most such questions waiting at once.
 */
function silentDeps(deadlineMs: number, honourTimeout: boolean): { deps: IpLookupDeps; pending: { now: number; max: number } } {
  const pending = { now: 0, max: 0 };
  const slow = (name: string): boolean => name.startsWith(`${rev(SLOW_IP)}.`);
  const querier: DnsQuerier = {
    query(name, type, opts) {
      if (!slow(name)) return client.query(name, type, opts);
      pending.max = Math.max(pending.max, ++pending.now);
      return new Promise((_resolve, reject) => {
        if (honourTimeout) setTimeout(() => (pending.now--, reject(new Error('timeout'))), opts?.timeoutMs ?? deadlineMs);
      });
    },
  };
  return { deps: { ...deps, dns: querier, ptrTimeoutMs: deadlineMs, securityTimeoutMs: deadlineMs }, pending };
}

function expectNoLocation(r: IpLookupResult): void {
  for (const value of Object.values(r.location)) assert.equal(value, null);
  assert.deepEqual(r.asn, { number: null, organization: null, network: null });
}

describe('lookupIp', () => {
  test('a public IPv4 address: location and ASN from the readers', async () => {
    const r = await lookupIp(deps, CLEAN_IP);
    const city = geo.city(CLEAN_IP)!;
    const asn = geo.asn(CLEAN_IP)!;
    assert.equal(r.ip, CLEAN_IP);
    assert.equal(r.version, 4);
    assert.equal(r.type, 'public');
    assert.equal(r.hostname, null, 'no PTR without detailed');
    assert.deepEqual(r.location, {
      country: city.country,
      country_code: city.country_code,
      region: city.region,
      city: city.city,
      postal_code: city.postal_code,
      latitude: city.latitude,
      longitude: city.longitude,
      timezone: city.timezone,
      isp: asn.organization,
    });
    assert.deepEqual(r.asn, { number: asn.number, organization: asn.organization, network: asn.network });
    assert.equal(r.security, undefined);
    assert.equal(dns.count({ type: 'PTR' }), 0);
  });

  test('a public IPv6 address', async () => {
    const r = await lookupIp(deps, '2001:4860:4860:0:0:0:0:8888');
    assert.equal(r.ip, '2001:4860:4860::8888');
    assert.equal(r.version, 6);
    assert.equal(r.type, 'public');
    assert.equal(r.location.country_code, geo.city('2001:4860:4860::8888')!.country_code);
    assert.equal(r.asn.number, geo.asn('2001:4860:4860::8888')!.number);
  });

  test('detailed adds the PTR name and the extra location fields', async () => {
    const r = await lookupIp(deps, CLEAN_IP, { detailed: true });
    const city = geo.city(CLEAN_IP)!;
    assert.equal(r.hostname, 'dns.google');
    assert.equal(r.location.continent, city.continent);
    assert.equal(r.location.accuracy_radius, city.accuracy_radius);
    assert.equal(r.location.network, city.network);
    assert.equal(r.range, null);
    const v6 = await lookupIp(deps, '2001:4860:4860::8888', { detailed: true });
    assert.equal(v6.hostname, 'dns.google');
  });

  test('special-range addresses get no PTR query, even detailed', async () => {
    const before = dns.count({ type: 'PTR' });
    for (const ip of ['10.0.0.1', '192.168.1.1', '127.0.0.1', '169.254.169.254', '100.64.0.1', '::1', 'fe80::1', 'fd00::1', '::ffff:10.0.0.1']) {
      const r = await lookupIp(deps, ip, { detailed: true });
      assert.notEqual(r.type, 'public', ip);
      assert.equal(r.hostname, null, ip);
    }
    assert.equal(dns.count({ type: 'PTR' }), before, 'the resolver was never asked');
  });

  test('a PTR whose CNAME leads into a private reverse zone is null; one into a public zone is followed', async () => {
    assert.equal((await lookupIp(deps, INTO_PRIVATE_IP, { detailed: true })).hostname, null);
    assert.equal((await lookupIp(deps, CLASSLESS_IP, { detailed: true })).hostname, 'classless.example');
  });

  test('a PTR that never answers is null, by its deadline', GIVE_UP, async () => {
    const r = await lookupIp(silentDeps(DEADLINE_MS, false).deps, SLOW_IP, { detailed: true });
    assert.equal(r.hostname, null);
  });

  test('IPv4-mapped IPv6 is looked up and reported as IPv4', async () => {
    const r = await lookupIp(deps, '::ffff:8.8.8.8');
    const direct = await lookupIp(deps, CLEAN_IP);
    assert.deepEqual(r, direct);
    const loop = await lookupIp(deps, '::ffff:127.0.0.1');
    assert.equal(loop.ip, '127.0.0.1');
    assert.equal(loop.type, 'loopback');
  });

  const special: Array<[string, string]> = [
    ['10.1.2.3', 'private'],
    ['192.168.0.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['100.64.12.34', 'cgnat'],
    ['192.0.2.1', 'documentation'],
    ['2001:db8::1', 'documentation'],
    ['224.0.0.251', 'multicast'],
    ['ff02::1', 'multicast'],
    ['169.254.169.254', 'link_local'],
    ['fe80::1%eth0', 'link_local'],
    ['fd12:3456::1', 'unique_local'],
    ['198.18.0.1', 'benchmarking'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
  ];
  for (const [ip, type] of special) {
    test(`${ip} is ${type}, with no location and no ASN`, async () => {
      const r = await lookupIp(deps, ip, { detailed: true });
      assert.equal(r.type, type);
      expectNoLocation(r);
      assert.ok(typeof r.range === 'string' && r.range.includes('/'), `range ${String(r.range)}`);
    });
  }

  test('the zone id is not part of the reported address', async () => {
    assert.equal((await lookupIp(deps, 'fe80::1%eth0')).ip, 'fe80::1');
  });

  for (const bad of ['', 'abc', '256.1.1.1', '1.2.3', '010.1.1.1', '2130706433', '0x7f.1', '1:2:3', '[::1]', '8.8.8.8/32']) {
    test(`${JSON.stringify(bad)} is a ValidationError on ip`, async () => {
      await assert.rejects(lookupIp(deps, bad), (err: unknown) => {
        assert.ok(err instanceof ValidationError);
        assert.equal(err.details?.field, 'ip');
        assert.equal(err.message, 'ip: must be an IPv4 or IPv6 address');
        return true;
      });
    });
  }
});

describe('security_check', () => {
  test('a Tor exit listed on a DNSBL, in a hosting network', async () => {
    const asn = geo.asn(TOR_IP);
    const hosting = createHostingList({ keywords: [], asns: asn ? [{ asn: asn.number, name: 'x', provider: 'x', category: 'hosting' }] : [] });
    const r = await lookupIp({ ...deps, hosting }, TOR_IP, { security_check: true });
    assert.deepEqual(r.security, {
      is_tor: true,
      is_proxy: true,
      is_hosting: asn !== null,
      is_bogon: false,
      blacklists: [
        { list: BL, listed: true, response: ['127.0.0.2'] },
        { list: ZEN, listed: false, response: [] },
      ],
      ...scoreRisk({ isTor: true, isProxy: true, isHosting: asn !== null, isBogon: false, listedOn: [BL] }),
    });
    assert.deepEqual(r.security?.threats, ['tor_exit', `listed:${BL}`, ...(asn ? ['hosting'] : [])]);
    assert.equal(r.security?.risk_score, asn ? 90 : 80);
  });

  test('a clean address: not listed anywhere', async () => {
    const r = await lookupIp({ ...deps, hosting: createHostingList({ keywords: [], asns: [] }) }, CLEAN_IP, { security_check: true });
    assert.deepEqual(r.security, {
      is_tor: false,
      is_proxy: false,
      is_hosting: false,
      is_bogon: false,
      blacklists: [
        { list: BL, listed: false, response: [] },
        { list: ZEN, listed: false, response: [] },
      ],
      risk_score: 0,
      threats: [],
    });
  });

  test('the shipped hosting list marks a cloud address', async () => {
    const r = await lookupIp(deps, CLEAN_IP, { security_check: true });
    assert.equal(r.security?.is_hosting, true, `AS${String(r.asn.number)} ${String(r.asn.organization)}`);
    assert.deepEqual(r.security?.threats, ['hosting']);
  });

  test('a Spamhaus PBL answer is a policy listing, not abuse', async () => {
    const r = await lookupIp(deps, PBL_IP, { security_check: true });
    assert.deepEqual(r.security?.blacklists[1], { list: ZEN, listed: false, response: ['127.0.0.10'] });
  });

  test('an XBL answer makes the address a proxy', async () => {
    const r = await lookupIp(deps, XBL_IP, { security_check: true });
    assert.deepEqual(r.security?.blacklists[1], { list: ZEN, listed: true, response: ['127.0.0.4'] });
    assert.equal(r.security?.is_proxy, true);
    assert.ok(r.security?.threats.includes('proxy'));
    assert.ok(r.security?.threats.includes(`listed:${ZEN}`));
  });

  test('an error answer (127.255.255.x) is unknown, not listed', async () => {
    const r = await lookupIp(deps, ERRCODE_IP, { security_check: true });
    assert.deepEqual(r.security?.blacklists[1], { list: ZEN, listed: null, response: ['127.255.255.254'] });
    assert.ok(!r.security?.threats.includes(`listed:${ZEN}`));
  });

  test('a list that never answers is unknown, and the lookup still answers by the deadline', GIVE_UP, async () => {
    const r = await lookupIp(silentDeps(DEADLINE_MS, false).deps, SLOW_IP, { security_check: true, detailed: true });
    assert.equal(r.security?.is_tor, null, 'no answer from the Tor list');
    assert.equal(r.security?.is_proxy, null);
    assert.deepEqual(r.security?.blacklists[0], { list: BL, listed: null, response: [] });
    assert.equal(r.hostname, null);
    assert.equal(r.location.country_code, geo.city(SLOW_IP)?.country_code ?? null, 'the local data still answers');
  });

  test('without a DNS client the DNS checks are unknown', async () => {
    const r = await lookupIp({ ...deps, dns: null }, CLEAN_IP, { security_check: true, detailed: true });
    assert.equal(r.hostname, null);
    assert.equal(r.security?.is_tor, null);
    assert.deepEqual(r.security?.blacklists.map((b) => b.listed), [null, null]);
  });

  test('IPv6: nibble-reversed DNSBL queries, Tor unknown (its list is IPv4-only)', async () => {
    dns.resetLog();
    const r = await lookupIp(deps, '2001:4860:4860::8888', { security_check: true });
    assert.equal(r.security?.is_tor, null);
    assert.deepEqual(r.security?.blacklists.map((b) => b.listed), [false, false]);
    assert.equal(dns.count({ name: `${nibbles(GOOGLE_V6)}.${BL}` }), 1);
    assert.equal(dns.queries.filter((q) => q.name.endsWith(TOR_DNSEL_ZONE)).length, 0);
  });

  test('a bogon is not asked about: nothing is sent', async () => {
    dns.resetLog();
    const r = await lookupIp(deps, '10.0.0.1', { security_check: true });
    assert.deepEqual(r.security, {
      is_tor: false,
      is_proxy: false,
      is_hosting: false,
      is_bogon: true,
      blacklists: [],
      risk_score: 10,
      threats: ['bogon'],
    });
    assert.equal(dns.count(), 0);
  });
});

describe('risk score', () => {
  test('follows docs/risk-score.md', () => {
    const none = { isTor: false, isProxy: false, isHosting: false, isBogon: false, listedOn: [] };
    assert.deepEqual(scoreRisk(none), { risk_score: 0, threats: [] });
    assert.equal(scoreRisk({ ...none, isTor: true, isProxy: true }).risk_score, 60);
    assert.equal(scoreRisk({ ...none, isProxy: true }).risk_score, 40);
    assert.equal(scoreRisk({ ...none, listedOn: ['a'] }).risk_score, 20);
    assert.equal(scoreRisk({ ...none, listedOn: ['a', 'b', 'c', 'd'] }).risk_score, 60);
    assert.equal(scoreRisk({ ...none, isHosting: true }).risk_score, 10);
    assert.deepEqual(scoreRisk({ isTor: true, isProxy: true, isHosting: true, isBogon: false, listedOn: ['a', 'b'] }), {
      risk_score: 100,
      threats: ['tor_exit', 'listed:a', 'listed:b', 'hosting'],
    });
    assert.equal(scoreRisk({ ...none, isTor: null, isProxy: null }).risk_score, 0, 'unknown adds nothing');
  });
});

describe('lookupBulk', () => {
  test('mixed valid and invalid entries keep their order', async () => {
    const input = ['8.8.8.8', 'nope', '2001:4860:4860::8888', '10.0.0.1', '999.1.1.1', '::ffff:1.1.1.1'];
    const out = await lookupBulk(deps, input);
    assert.equal(out.length, input.length);
    assert.equal((out[0] as IpLookupResult).ip, '8.8.8.8');
    // docs/api.md, "Bulk calls" (issue 24): the error names the entry, with its code.
    assert.deepEqual(out[1], { ip: 'nope', error: 'ips[1]: must be an IPv4 or IPv6 address', error_code: 'validation_error' });
    assert.equal((out[2] as IpLookupResult).version, 6);
    assert.equal((out[3] as IpLookupResult).type, 'private');
    assert.deepEqual(out[4], { ip: '999.1.1.1', error: 'ips[4]: must be an IPv4 or IPv6 address', error_code: 'validation_error' });
    assert.equal((out[5] as IpLookupResult).ip, '1.1.1.1');
    assert.deepEqual(out[0], await lookupIp(deps, '8.8.8.8'));
  });

  test('the DNS checks of all entries run concurrently', async () => {
    const ips = Array.from({ length: 20 }, () => SLOW_IP).concat([TOR_IP, CLEAN_IP]);
    // Order, not time: every slow entry's questions wait at once; one entry after another would
    // have had one entry's waiting at a time.
    const { deps: slowDeps, pending } = silentDeps(LIVE_DEADLINE_MS / 5, true);
    const out = await lookupBulk(slowDeps, ips, { security_check: true });
    assert.ok(pending.max >= 20 * 2, `${pending.max} questions about the 20 slow entries waiting at once`);
    assert.equal((out[20] as IpLookupResult).security?.is_tor, true);
    assert.equal((out[0] as IpLookupResult).security?.blacklists[0]?.listed, null);
  });

  test('bounds of the list', async () => {
    await assert.rejects(lookupBulk(deps, []), /ips: at least 1 entry/);
    await assert.rejects(lookupBulk(deps, Array.from({ length: IP_BULK_MAX + 1 }, () => '8.8.8.8')), /ips: at most 100 entries/);
    const full = await lookupBulk(deps, Array.from({ length: IP_BULK_MAX }, (_, i) => `1.0.${i}.1`));
    assert.equal(full.length, IP_BULK_MAX);
    assert.deepEqual(
      full.map((r) => (r as IpLookupResult).ip),
      Array.from({ length: IP_BULK_MAX }, (_, i) => `1.0.${i}.1`),
    );
  });
});
