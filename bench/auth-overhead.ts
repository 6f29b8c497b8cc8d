import { load, startServer, summary, type LoadResult } from './lib.js';
import { median } from './stats.js';

/**
 * Issues 2 and 3: requests/s of cheap authenticated requests through the whole pipeline
 * (authentication, rate limiting, usage recording with group commit, the envelope) against bare
 * Fastify answering the same JSON, in the same run. Rounds alternate between the servers and
 * the median is reported, so background noise hits both alike.
 *   node --import tsx bench/auth-overhead.ts            (BENCH_SECONDS, BENCH_ROUNDS to change)
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const bare = await startServer('./servers/bare.ts');
const nd = await startServer('./servers/netdiag.ts');
const ndLog = await startServer('./servers/netdiag.ts', { BENCH_LOG: '1' });
const auth = (token: string | undefined) => ({ authorization: `Bearer ${token}` });
const expandBody = JSON.stringify({ ipv6: '2001:db8::1' });

const cases: Array<{ name: string; run: () => Promise<LoadResult> }> = [
  { name: 'bare Fastify GET /api/user (same JSON)', run: () => load(`${bare.url}/api/user`, {}, undefined, {}, bare) },
  { name: 'netdiag GET /api/user', run: () => load(`${nd.url}/api/user`, auth(nd.info.token), undefined, {}, nd) },
  {
    name: 'netdiag POST /api/ipv6/expand',
    run: () => load(`${nd.url}/api/ipv6/expand`, { ...auth(nd.info.token), 'content-type': 'application/json' }, undefined, { method: 'POST', body: expandBody }, nd),
  },
  { name: 'netdiag GET /api/user, request log on', run: () => load(`${ndLog.url}/api/user`, auth(ndLog.info.token), undefined, {}, ndLog) },
];

const results = new Map<string, LoadResult[]>(cases.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) results.get(c.name)!.push(await c.run());
}
await Promise.all([bare.stop(), nd.stop(), ndLog.stop()]);

/** The run whose requests/s is the median of the rounds'. */
const medianRun = (rs: LoadResult[]) => [...rs].sort((a, b) => a.requests.average - b.requests.average)[Math.floor(rs.length / 2)]!;
const cpuOf = (rs: LoadResult[]) => {
  const xs = rs.map((r) => r.serverCpuPerRequest).filter((x): x is number => x !== null);
  return xs.length > 0 ? median(xs) : null;
};
const baseline = medianRun(results.get(cases[0]!.name)!);
const baselineCpu = cpuOf(results.get(cases[0]!.name)!);
for (const c of cases) {
  const rs = results.get(c.name)!;
  const m = medianRun(rs);
  const ratio = (m.requests.average / baseline.requests.average).toFixed(3);
  const cpu = cpuOf(rs);
  // Bare Fastify's CPU per request over this case's: the same ratio as requests/s would be if
  // the server alone were the bottleneck, without the load generator's noise.
  const cpuText = cpu !== null && baselineCpu !== null ? `  server CPU ${cpu.toFixed(1)} µs/request (bare/this ${(baselineCpu / cpu).toFixed(3)})` : '';
  console.log(`${summary(c.name.padEnd(40), m)}  ratio ${ratio}${cpuText}  (rounds: ${rs.map((r) => Math.round(r.requests.average)).join(', ')})`);
}
