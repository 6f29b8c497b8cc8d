/**
 * Operators' own MaxMind files (NETDIAG_GEOIP_CITY_DB / NETDIAG_GEOIP_ASN_DB), built here with a
 * small writer because the ASN and ISP databases cannot be shipped; and the empty reader.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createGeoReader, EmptyGeoReader, MmdbAsnReader } from '../../../src/infra/geoip/index.js';
import { writeMmdb } from './fixtures/mmdb-writer.js';
import { ConfigError } from '../../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-geoip-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const BUILD = Date.UTC(2024, 4, 17, 12) / 1000;

const ispFile = join(dir, 'GeoIP2-ISP.mmdb');
writeFileSync(
  ispFile,
  writeMmdb({
    databaseType: 'GeoIP2-ISP',
    buildEpoch: BUILD,
    networks: [
      ['198.51.100.0/24', { autonomous_system_number: 64500, autonomous_system_organization: 'Example Transit', isp: 'Example Broadband', organization: 'Example Org' }],
      ['203.0.113.0/25', { autonomous_system_number: 64501, isp: 'Only ISP Named' }],
      ['203.0.113.128/25', { isp: 'No AS number' }],
    ],
  }),
);

const asnFile = join(dir, 'GeoLite2-ASN.mmdb');
writeFileSync(
  asnFile,
  writeMmdb({
    databaseType: 'GeoLite2-ASN',
    buildEpoch: BUILD,
    networks: [['192.0.2.0/24', { autonomous_system_number: 64496, autonomous_system_organization: 'Doc Net' }]],
  }),
);

const cityFile = join(dir, 'GeoIP2-City.mmdb.gz');
writeFileSync(
  cityFile,
  gzipSync(
    writeMmdb({
      databaseType: 'GeoIP2-City',
      buildEpoch: BUILD,
      networks: [
        [
          '198.51.100.0/24',
          {
            city: { geoname_id: 1, names: { en: 'Testville' } },
            country: { geoname_id: 2, iso_code: 'NL', names: { en: 'Netherlands' } },
            continent: { code: 'EU', geoname_id: 3, names: { en: 'Europe' } },
            location: { accuracy_radius: 5, latitude: { double: 52.5 }, longitude: { double: 4.25 }, time_zone: 'Europe/Amsterdam' },
            postal: { code: '1234' },
            subdivisions: [{ geoname_id: 4, iso_code: 'NH', names: { en: 'North Holland' } }],
          },
        ],
      ],
    }),
  ),
);

describe('operator files', () => {
  test('an ISP database maps isp and organisation, and the AS number', () => {
    const reader = createGeoReader({ asnDb: ispFile, bundled: { cityDb: null, asnCsv: null, asnCsvBuildDate: null } });
    assert.deepEqual(reader.asn('198.51.100.7'), { number: 64500, organization: 'Example Transit', network: '198.51.100.0/24', isp: 'Example Broadband' });
    assert.deepEqual(reader.asn('203.0.113.9'), { number: 64501, organization: 'Only ISP Named', network: '203.0.113.0/25', isp: 'Only ISP Named' });
    assert.equal(reader.asn('203.0.113.200'), null, 'no AS number: no AsnRecord');
    assert.equal(reader.asn('192.0.2.1'), null);
    assert.equal(reader.asn('2001:db8::1'), null, 'IPv6 against an IPv4-only file');
    assert.equal(reader.city('198.51.100.7'), null, 'no city data at all');
    assert.equal(reader.info.asnBuildDate, '2024-05-17');
    assert.deepEqual(reader.info.sources, ['GeoIP2-ISP data by MaxMind (https://www.maxmind.com).']);
  });

  test('a GeoLite2-ASN file and a gzipped City file, loaded asynchronously', async () => {
    const reader = createGeoReader({ cityDb: cityFile, asnDb: asnFile, bundled: { cityDb: null, asnCsv: null, asnCsvBuildDate: null } });
    await reader.load();
    assert.deepEqual(reader.asn('192.0.2.55'), { number: 64496, organization: 'Doc Net', network: '192.0.2.0/24', isp: null });
    assert.deepEqual(reader.city('198.51.100.1'), {
      country: 'Netherlands',
      country_code: 'NL',
      region: 'North Holland',
      city: 'Testville',
      postal_code: '1234',
      latitude: 52.5,
      longitude: 4.25,
      timezone: 'Europe/Amsterdam',
      continent: 'Europe',
      accuracy_radius: 5,
      network: '198.51.100.0/24',
      registered_country: null,
      registered_country_code: null,
    });
    assert.equal(reader.info.cityBuildDate, '2024-05-17');
    assert.equal(reader.info.sources.length, 2);
    assert.match(reader.info.sources[1]!, /GeoLite2 data created by MaxMind/);
  });

  test('a missing or wrong file stops the start with the variable named', async () => {
    const none = { cityDb: null, asnCsv: null, asnCsvBuildDate: null };
    await assert.rejects(createGeoReader({ cityDb: join(dir, 'nope.mmdb'), bundled: none }).load(), (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /NETDIAG_GEOIP_CITY_DB=.*nope\.mmdb.*file not found/);
      return true;
    });
    await assert.rejects(createGeoReader({ asnDb: cityFile, bundled: none }).load(), /NETDIAG_GEOIP_ASN_DB=.*expected an ASN or ISP database/);
    assert.throws(() => createGeoReader({ cityDb: asnFile, bundled: none }).city('1.2.3.4'), /NETDIAG_GEOIP_CITY_DB=.*expected a City or Country database/);
    assert.throws(() => MmdbAsnReader.fromBuffer(Buffer.from('not a database')));
  });
});

describe('no data', () => {
  test('the empty reader answers null', async () => {
    const empty = new EmptyGeoReader();
    await empty.load();
    assert.equal(empty.city('8.8.8.8'), null);
    assert.equal(empty.asn('8.8.8.8'), null);
    assert.deepEqual(empty.info, { cityBuildDate: null, asnBuildDate: null, sources: [] });
  });

  test('a reader with no bundled data is empty, not broken', async () => {
    const reader = createGeoReader({ bundled: { cityDb: null, asnCsv: null, asnCsvBuildDate: null } });
    await reader.load();
    assert.equal(reader.city('8.8.8.8'), null);
    assert.equal(reader.asn('8.8.8.8'), null);
    assert.deepEqual(reader.info.sources, []);
  });
});
