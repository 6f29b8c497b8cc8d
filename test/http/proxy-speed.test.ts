import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SPEED_DOWNLOAD_BYTES, SPEED_MIN_TIMED_MS, SPEED_UPLOAD_BYTES, TOO_FAST_TO_MEASURE } from '../../src/domain/proxy/defaults.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { startHttpProxy, startSocksProxy, startTlsTarget, type Running } from '../fixtures/proxies.js';

/**
 * Issue 24: a loopback proxy's upload came out as the constant 104857.6 Mbps, a clamped interval
 * rather than a measurement. A speed is the bytes that arrived over the time they took, and an
 * interval too short to time honestly (under SPEED_MIN_TIMED_MS) says so instead of a figure.
 */

interface Speed {
  download: string | null;
  upload: string | null;
  latency: string | null;
}

const fixtures: Record<string, Running> = {};
/** 1 MB/s = 8 Mbps: the 128 KiB upload takes some 130 ms through this proxy, long enough to time. */
const SLOW_UPLINK_BYTES_PER_S = 1_000_000;

before(async () => {
  fixtures.http = await startHttpProxy({ kind: 'elite' });
  fixtures.socks5 = await startSocksProxy({ version: 5 });
  fixtures.slowUplink = await startSocksProxy({ version: 5, uploadBytesPerSecond: SLOW_UPLINK_BYTES_PER_S });
  fixtures.tls = await startTlsTarget();
});
after(() => Promise.all(Object.values(fixtures).map((f) => f.close())));

async function speedOf(b: Built, proxy: string): Promise<Speed> {
  const res = await b.api('/api/proxy/check', { json: { proxy, check_ssl: false, check_anonymity: false, check_location: false } });
  const body = (await res.json()) as { data: { status: string; speed: Speed; checks: { speed: { status: string; error: string | null } } } };
  await assertMatchesOpenApi(b.app, 'POST', '/api/proxy/check', res.status, body);
  assert.equal(body.data.status, 'working');
  assert.equal(body.data.checks.speed.status, 'ok', body.data.checks.speed.error ?? '');
  return body.data.speed;
}

/** Mbps of a figure, or null for "too fast to measure"; anything else fails. */
function figure(text: string | null): number | null {
  if (text === TOO_FAST_TO_MEASURE) return null;
  const m = /^(\d+(?:\.\d+)?) Mbps$/.exec(text ?? '');
  assert.ok(m, `a speed is "<number> Mbps" or "${TOO_FAST_TO_MEASURE}", got ${text}`);
  return Number(m[1]);
}

/** The largest figure an interval of at least SPEED_MIN_TIMED_MS can give for `bytes`. */
const ceiling = (bytes: number): number => (bytes * 8) / (SPEED_MIN_TIMED_MS / 1000) / 1e6;

const app = (t: import('node:test').TestContext): Promise<Built> =>
  build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_SSL_CHECK_TARGET: fixtures.tls!.address } });

test('loopback proxies: each speed is a measurement of a timed interval or "too fast to measure", never a clamped constant', async (t) => {
  const b = await app(t);
  for (const name of ['http', 'socks5']) {
    for (let i = 0; i < 3; i++) {
      const speed = await speedOf(b, fixtures[name]!.address);
      t.diagnostic(`${name}: download ${speed.download}, upload ${speed.upload}, latency ${speed.latency}`);
      assert.notEqual(speed.upload, '104857.6 Mbps', 'the clamped 0.01 ms interval');
      const up = figure(speed.upload);
      const down = figure(speed.download);
      if (up !== null) assert.ok(up > 0 && up <= ceiling(SPEED_UPLOAD_BYTES), `${name} upload ${speed.upload} comes from an interval under ${SPEED_MIN_TIMED_MS} ms`);
      if (down !== null) assert.ok(down > 0 && down <= ceiling(SPEED_DOWNLOAD_BYTES), `${name} download ${speed.download} comes from an interval under ${SPEED_MIN_TIMED_MS} ms`);
      assert.match(speed.latency ?? '', /^\d+(\.\d+)?ms$/);
    }
  }
});

test('a proxy with a slow uplink: the upload is measured, and no faster than its uplink lets bytes through', async (t) => {
  const b = await app(t);
  const speed = await speedOf(b, fixtures.slowUplink!.address);
  t.diagnostic(`slow uplink (${SLOW_UPLINK_BYTES_PER_S} B/s): download ${speed.download}, upload ${speed.upload}, latency ${speed.latency}`);
  const up = figure(speed.upload);
  assert.notEqual(up, null, 'some 130 ms is long enough to time');
  const uplinkMbps = (SLOW_UPLINK_BYTES_PER_S * 8) / 1e6;
  // Loose: the round trip taken off the interval is itself measured, and a loaded machine stretches it.
  assert.ok(up! > 0 && up! <= uplinkMbps * 2, `upload ${speed.upload} through an uplink of ${uplinkMbps} Mbps`);
});
