/**
 * GeoIP reader figures for BENCHMARKS.md: load time and memory of the bundled data, in-process
 * lookups per second (city + asn), and the time of a 100-address bulk lookup without
 * security_check (no DNS).
 *
 *   node --import tsx bench/geoip-reader.ts [--seconds 3]
 *   node --expose-gc --import tsx bench/geoip-reader.ts   (RSS after a collection)
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import ipaddr from 'ipaddr.js';
import { lookupBulk } from '../src/domain/ip/index.js';
import { createGeoReader } from '../src/infra/geoip/index.js';
import { median, quantile } from './stats.js';

const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1]) || 3;
const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

// Deterministic addresses, so runs compare.
let seed = 0x2545f491;
const rand32 = (): number => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return seed >>> 0;
};

/** Random unicast IPv4 in 1.0.0.0-223.255.255.255 (some will be special; they cost the same). */
function randomIPv4(): string {
  const v = 0x01000000 + (rand32() % (0xe0000000 - 0x01000000));
  return `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
}

/**
 * Random IPv6 inside ranges the ASN data knows: random addresses in 2000::/3 almost never hit
 * allocated space, which would measure only the misses.
 */
const v6Rows = readFileSync(join(dirname(createRequire(import.meta.url).resolve('@ip-location-db/asn/package.json')), 'asn-ipv6.csv'), 'utf8')
  .split('\n')
  .filter((line) => line.includes(','));
const toBig = (ip: string): bigint => ipaddr.parse(ip).toByteArray().reduce((acc, b) => (acc << 8n) | BigInt(b), 0n);
function randomIPv6(): string {
  const [start, end] = v6Rows[rand32() % v6Rows.length]!.split(',') as [string, string];
  const lo = toBig(start);
  const span = toBig(end) - lo + 1n;
  const v = lo + ((BigInt(rand32()) << 32n) | BigInt(rand32())) % span;
  const bytes = Array.from({ length: 16 }, (_, i) => Number((v >> BigInt(8 * (15 - i))) & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

async function main(): Promise<void> {
  // The sample rows above are bench scaffolding: drop them from the "before" figure.
  (globalThis as { gc?: () => void }).gc?.();
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const geo = createGeoReader();
  await geo.load();
  const loadMs = performance.now() - started;
  // Let the file buffers of the load go, so the figures show what stays (with --expose-gc).
  for (let i = 0; i < 3; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const mem = process.memoryUsage();

  console.log(`load: ${loadMs.toFixed(0)} ms`);
  console.log(`rss: ${mb(rssBefore)} before, ${mb(mem.rss)} after load (heap ${mb(mem.heapUsed)}, external+arrayBuffers ${mb(mem.external)})`);
  console.log(`data: city ${geo.info.cityBuildDate}, asn ${geo.info.asnBuildDate}`);

  const results: Record<string, number> = {};
  for (const [label, gen] of [
    ['IPv4', randomIPv4],
    ['IPv6', randomIPv6],
  ] as const) {
    const ips = Array.from({ length: 100_000 }, gen);
    // Warm up the JIT and the lookup paths.
    for (let i = 0; i < 20_000; i++) {
      geo.city(ips[i]!);
      geo.asn(ips[i]!);
    }
    let n = 0;
    let found = 0;
    const t0 = performance.now();
    const until = t0 + seconds * 1000;
    while (performance.now() < until) {
      for (let i = 0; i < 1000; i++, n++) {
        const ip = ips[n % ips.length]!;
        const c = geo.city(ip);
        const a = geo.asn(ip);
        if (c || a) found++;
      }
    }
    const perS = n / ((performance.now() - t0) / 1000);
    results[label] = perS;
    console.log(`${label}: ${Math.round(perS).toLocaleString('en')} lookups/s (city + asn each), ${((found / n) * 100).toFixed(0)}% with data`);
  }

  // A 100-address bulk without security_check: what /ip/bulk costs when no DNS is asked.
  const deps = { geo };
  const mixed = Array.from({ length: 100 }, (_, i) => (i % 4 === 3 ? randomIPv6() : randomIPv4()));
  for (let i = 0; i < 50; i++) await lookupBulk(deps, mixed);
  const times: number[] = [];
  for (let i = 0; i < 500; i++) {
    const batch = Array.from({ length: 100 }, (_, k) => (k % 4 === 3 ? randomIPv6() : randomIPv4()));
    const t = performance.now();
    await lookupBulk(deps, batch);
    times.push(performance.now() - t);
  }
  console.log(
    `bulk of 100 (75% IPv4, 25% IPv6, no security_check): median ${median(times).toFixed(2)} ms, p95 ${quantile(times, 0.95).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms`,
  );
  console.log(
    JSON.stringify({
      load_ms: Math.round(loadMs),
      rss_after_load_mib: Math.round(mem.rss / 2 ** 20),
      ipv4_lookups_per_s: Math.round(results.IPv4 ?? 0),
      ipv6_lookups_per_s: Math.round(results.IPv6 ?? 0),
      bulk100_median_ms: Number(median(times).toFixed(2)),
      bulk100_p95_ms: Number(quantile(times, 0.95).toFixed(2)),
    }),
  );
}

await main();
