/**
 * The operator's GeoIP files read again while the server runs (docs/operations.md): a file
 * replaced on disk is noticed (fs.watch on its directory, or the stat poll alone) and swapped in
 * without a failed lookup; a broken file keeps the data in use; /readyz shows the build dates.
 */
import assert from 'node:assert/strict';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { gzipSync } from 'node:zlib';
import { createGeoReader, watchGeoFiles } from '../../../src/infra/geoip/index.js';
import { build, tempDir } from '../../helpers/build.js';
import { eventually } from '../../helpers/eventually.js';
import { writeMmdb } from './fixtures/mmdb-writer.js';
import { roomyLimiter } from '../../helpers/roomy-limiter.js';

/** A public address, so that the lookup asks the City data (a documentation range would get no location). */
const IP = '81.2.69.142';
const FIRST = { city: 'Firstville', buildEpoch: Date.UTC(2024, 4, 17, 12) / 1000, date: '2024-05-17' };
const SECOND = { city: 'Secondton', buildEpoch: Date.UTC(2025, 0, 2, 12) / 1000, date: '2025-01-02' };

function cityDb(v: { city: string; buildEpoch: number }): Buffer {
  return writeMmdb({
    databaseType: 'GeoIP2-City',
    buildEpoch: v.buildEpoch,
    networks: [['81.2.69.0/24', { city: { geoname_id: 1, names: { en: v.city } }, country: { geoname_id: 2, iso_code: 'GB', names: { en: 'United Kingdom' } } }]],
  });
}

const asnDb = () =>
  writeMmdb({ databaseType: 'GeoLite2-ASN', buildEpoch: FIRST.buildEpoch, networks: [['81.2.69.0/24', { autonomous_system_number: 64496, autonomous_system_organization: 'Test Net' }]] });

/** Writes `bytes` beside `path` and renames it over: how operators (and geoipupdate) replace a database. */
function replace(path: string, bytes: Buffer): void {
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
}

function files(t: TestContext): { city: string; asn: string } {
  const dir = tempDir(t, 'netdiag-geoip-reload-');
  const city = join(dir, 'City.mmdb');
  const asn = join(dir, 'ASN.mmdb');
  writeFileSync(city, cityDb(FIRST));
  writeFileSync(asn, asnDb());
  return { city, asn };
}

const NO_BUNDLE = { cityDb: null, asnCsv: null, asnCsvBuildDate: null };
const quiet = { info: () => undefined, warn: () => undefined };

test('a City file replaced under a running server changes lookups within seconds, no lookup fails meanwhile, and /readyz shows the new build date', async (t) => {
  const f = files(t);
  // Windows no test fills: the lookups go on as long as the swap takes, and the subject is no 429.
  const b = await build(t, { env: { NETDIAG_GEOIP_CITY_DB: f.city, NETDIAG_GEOIP_ASN_DB: f.asn }, deps: { limiter: roomyLimiter() } });
  const lookup = async (): Promise<{ status: number; city: string | null }> => {
    const res = await b.api('/api/ip/lookup', { json: { ip: IP } });
    const body = (await res.json()) as { data?: { location: { city: string | null } } };
    return { status: res.status, city: body.data?.location.city ?? null };
  };
  assert.deepEqual(await lookup(), { status: 200, city: FIRST.city });
  const ready = async () => ((await (await fetch(`${b.url}/readyz`)).json()) as { geoip: { city_build_date: string; asn_build_date: string } }).geoip;
  assert.deepEqual(await ready(), { city_build_date: FIRST.date, asn_build_date: FIRST.date });

  // Lookups keep going, four at a time, from before the swap until each loop has seen the new data.
  const answers: Array<{ status: number; city: string | null }> = [];
  let swapped = false;
  const load = Array.from({ length: 4 }, async () => {
    for (;;) {
      const a = await lookup();
      answers.push(a);
      if (a.city === SECOND.city || a.status !== 200) return;
      if (!swapped) {
        swapped = true;
        replace(f.city, gzipSync(cityDb(SECOND)));
      }
    }
  });
  await Promise.all(load);
  assert.deepEqual(answers.filter((a) => a.status !== 200 || (a.city !== FIRST.city && a.city !== SECOND.city)), [], 'every lookup answered, from one file or the other');
  assert.ok(answers.some((a) => a.city === FIRST.city), 'the old data answered while the new file was read');
  assert.deepEqual(await ready(), { city_build_date: SECOND.date, asn_build_date: FIRST.date });
});

test('a broken file keeps the data in use (and says so); the next good one is read', async (t) => {
  const f = files(t);
  const reader = createGeoReader({ cityDb: f.city, asnDb: f.asn, bundled: NO_BUNDLE });
  await reader.load();
  const warnings: string[] = [];
  const infos: string[] = [];
  const watch = watchGeoFiles(reader, { log: { info: (_o, m) => infos.push(m), warn: (_o, m) => warnings.push(m) }, debounceMs: 20 });
  t.after(() => watch.close());

  replace(f.city, Buffer.from('not a MaxMind database at all'));
  await eventually(() => warnings.length > 0, { what: 'the broken file refused' });
  assert.match(warnings[0]!, /could not be read again; the data read before stays in use/);
  assert.equal(reader.city(IP)?.city, FIRST.city);
  assert.equal(reader.info.cityBuildDate, FIRST.date);

  // An ASN database given as the City file opens, but is refused for its type: the old data stays too.
  replace(f.city, asnDb());
  await eventually(() => warnings.length > 1, { what: 'the wrong kind refused' });
  assert.equal(reader.city(IP)?.city, FIRST.city);

  replace(f.city, cityDb(SECOND));
  await eventually(() => reader.city(IP)?.city === SECOND.city, { what: 'the good file read' });
  assert.equal(reader.info.cityBuildDate, SECOND.date);
  assert.equal(reader.asn(IP)?.number, 64496, 'the ASN data is untouched');
  assert.ok(infos.some((m) => /GeoIP city data reloaded from NETDIAG_GEOIP_CITY_DB/.test(m)));
});

test('without fs.watch events the stat poll notices a file rewritten in place', async (t) => {
  const f = files(t);
  const reader = createGeoReader({ cityDb: f.city, asnDb: f.asn, bundled: NO_BUNDLE });
  await reader.load();
  const watch = watchGeoFiles(reader, { log: quiet, useFsWatch: false, pollMs: 30, debounceMs: 10 });
  t.after(() => watch.close());
  // In place: the same inode, rewritten.
  writeFileSync(f.city, cityDb(SECOND));
  await eventually(() => reader.city(IP)?.city === SECOND.city, { what: 'the poll noticed the change' });
});

test('reloadAll (SIGHUP) reads every operator file again; nothing is re-read when nothing changed', async (t) => {
  const f = files(t);
  const reader = createGeoReader({ cityDb: f.city, asnDb: f.asn, bundled: NO_BUNDLE });
  await reader.load();
  assert.equal(await reader.reload('city'), null, 'unchanged: nothing to do');
  const infos: string[] = [];
  const watch = watchGeoFiles(reader, { log: { info: (_o, m) => infos.push(m), warn: () => undefined }, useFsWatch: false, pollMs: 60_000 });
  t.after(() => watch.close());
  await watch.reloadAll();
  assert.equal(infos.length, 2, 'both files read again when asked');
  // The poll is a minute away and fs.watch is off: only reloadAll can have read this one.
  writeFileSync(`${f.city}.new`, cityDb(SECOND));
  renameSync(`${f.city}.new`, f.city);
  await watch.reloadAll();
  assert.equal(reader.city(IP)?.city, SECOND.city);
});

test('a closed watch reads nothing: a SIGHUP after shutdown began leaves the data as it was', async (t) => {
  const f = files(t);
  const reader = createGeoReader({ cityDb: f.city, asnDb: f.asn, bundled: NO_BUNDLE });
  await reader.load();
  const infos: string[] = [];
  const watch = watchGeoFiles(reader, { log: { info: (_o, m) => infos.push(m), warn: () => undefined }, useFsWatch: false, pollMs: 60_000 });
  watch.close();
  replace(f.city, cityDb(SECOND));
  await watch.reloadAll();
  assert.deepEqual(infos, []);
  assert.equal(reader.city(IP)?.city, FIRST.city);
});
