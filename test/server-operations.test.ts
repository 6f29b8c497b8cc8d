/**
 * `netdiag serve` as operators run it: SIGHUP reads the GeoIP files again (and does not end the
 * process, SIGHUP's default), /readyz shows their build dates, /metrics answers with its token.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { tempDir } from './helpers/build.js';
import { eventually } from './helpers/eventually.js';
import { serve } from './helpers/serve.js';
import { writeMmdb } from './infra/geoip/fixtures/mmdb-writer.js';

const BUILD = Date.UTC(2024, 4, 17, 12) / 1000;
const TOKEN = 'metrics-token-for-the-server-test';

test('netdiag serve: SIGHUP re-reads the GeoIP files without a restart; /readyz and /metrics answer', async (t) => {
  const dir = tempDir(t);
  const city = join(dir, 'City.mmdb');
  const asn = join(dir, 'ASN.mmdb');
  writeFileSync(city, writeMmdb({ databaseType: 'GeoIP2-City', buildEpoch: BUILD, networks: [['81.2.69.0/24', { city: { geoname_id: 1, names: { en: 'Firstville' } } }]] }));
  writeFileSync(asn, writeMmdb({ databaseType: 'GeoLite2-ASN', buildEpoch: BUILD, networks: [['81.2.69.0/24', { autonomous_system_number: 64496, autonomous_system_organization: 'Test Net' }]] }));
  const server = await serve(join(dir, 'server.db'), true, {
    NETDIAG_GEOIP_CITY_DB: city,
    NETDIAG_GEOIP_ASN_DB: asn,
    NETDIAG_METRICS_TOKEN: TOKEN,
    LOG_LEVEL: 'info',
    LOG_FORMAT: 'json',
  });
  t.after(() => server.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${server.port}`;

  // (Which path tools run here is the machine's business, not this test's.)
  const { path_tools: _pathTools, ...ready } = (await (await fetch(`${base}/readyz`)).json()) as { status: string; geoip: unknown; path_tools: unknown };
  assert.deepEqual(ready, { status: 'ready', geoip: { city_build_date: '2024-05-17', asn_build_date: '2024-05-17' } });

  // The files did not change: only the signal can make the server read them again.
  server.child.kill('SIGHUP');
  await eventually(() => /GeoIP city data reloaded/.test(server.stdout()) && /GeoIP asn data reloaded/.test(server.stdout()), { what: 'both files read again after SIGHUP' });
  assert.match(server.stdout(), /SIGHUP: reading the GeoIP files again/);
  assert.equal(server.child.exitCode, null, 'SIGHUP does not end the server');

  const res = await fetch(`${base}/api/ip/lookup`, { method: 'POST', headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ ip: '81.2.69.142' }) });
  assert.equal(((await res.json()) as { data: { location: { city: string } } }).data.location.city, 'Firstville');

  assert.equal((await fetch(`${base}/metrics`)).status, 401);
  const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(metrics.status, 200);
  assert.match(await metrics.text(), /netdiag_probes_total\{tool="ip_lookup",outcome="ok"\} 1/);

  server.child.kill('SIGTERM');
  assert.equal(await server.exited, 0);
});
