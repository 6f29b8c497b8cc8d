import { startDnsServer, type FixtureRecord } from '../../test/fixtures/dns-server.js';

/**
 * The loopback DNS test fixture in its own process, so it answers from its own core while the
 * benchmark measures the client. BENCH_DNS_NAMES names `bulkN.bench.test`, each with one A
 * record of TTL 0: a TTL of 0 is never cached, so every lookup in the benchmark goes to the wire.
 * BENCH_DNS_DELAY_MS > 0 delays every answer, like a resolver that is not on this host.
 */
const names = Number(process.env.BENCH_DNS_NAMES ?? 50);
const records: FixtureRecord[] = Array.from({ length: names }, (_, i) => ({
  name: `bulk${i}.bench.test`,
  type: 'A',
  ttl: 0,
  data: `198.51.100.${i % 256}`,
}));
const delayMs = Number(process.env.BENCH_DNS_DELAY_MS ?? 0);
const dns = await startDnsServer({ records, ...(delayMs > 0 ? { behaviours: { '*': { delayMs } } } : {}) });
process.stdout.write(JSON.stringify({ url: `dns://127.0.0.1:${dns.port}`, port: String(dns.port) }) + '\n');
process.once('SIGTERM', () => void dns.close().then(() => process.exit(0)));
