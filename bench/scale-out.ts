import { load, startServer, summary, variants, type ChildServer, type LoadResult } from './lib.js';
import { median } from './stats.js';

/**
 * Issue 15: `GET /api/user` at -c 50 on the scale-out path (PostgreSQL + the Redis limiter, what
 * several instances share) against the embedded one (SQLite + the in-process limiter), in the
 * same run. Each round starts a fresh server process for each case; medians over rounds.
 * Aim: scale-out ≥ 0.5× embedded.
 *   node --import tsx bench/scale-out.ts   (BENCH_SECONDS, BENCH_ROUNDS; BENCH_DATABASE_URL, BENCH_REDIS_URL)
 *
 * Each case's last figure is server-bound: the requests a second one core would serve at the
 * server's measured CPU per request (bench/lib.ts pins the server to core 0, the load generator
 * to core 1). On this 2-core machine PostgreSQL and Redis run on either core, and the embedded
 * server is often held back by the load generator, so requests/s moves with whatever shares the
 * cores; the server-bound figure is what separate machines for them would leave to the server.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const cases: Array<{ name: string; env: Record<string, string> }> = [
  { name: 'embedded: SQLite + in-process limiter', env: {} },
  { name: 'scale-out: PostgreSQL + Redis', env: { BENCH_BACKEND: 'scale-out' } },
  // BENCH_VS (bench/lib.ts variants): the scale-out case again per entry, with that server environment.
  ...variants().map((v) => ({ name: `scale-out, ${v.label}`, env: { BENCH_BACKEND: 'scale-out', ...v.env } })),
];
const getUser = (s: ChildServer) => load(`${s.url}/api/user`, { authorization: `Bearer ${s.info.token}` }, undefined, {}, s);

const results = new Map<string, LoadResult[]>(cases.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) {
    const server = await startServer('./servers/netdiag.ts', c.env);
    try {
      results.get(c.name)!.push(await getUser(server));
    } finally {
      await server.stop();
    }
  }
}
const medianRun = (rs: LoadResult[]) => [...rs].sort((a, b) => a.requests.average - b.requests.average)[Math.floor(rs.length / 2)]!;
const base = medianRun(results.get(cases[0]!.name)!);
const cpuOf = (rs: LoadResult[]) => {
  const cpu = rs.map((r) => r.serverCpuPerRequest).filter((x): x is number => x !== null);
  return cpu.length ? median(cpu) : null;
};
const baseCpu = cpuOf(results.get(cases[0]!.name)!);
for (const c of cases) {
  const rs = results.get(c.name)!;
  const m = medianRun(rs);
  const cpu = cpuOf(rs);
  const cpuText = cpu === null ? '' : `  server CPU ${cpu.toFixed(1)} µs/request`;
  const boundText = cpu === null || baseCpu === null ? '' : `  server-bound ${Math.round(1e6 / cpu)} req/s, ratio ${(baseCpu / cpu).toFixed(3)}`;
  console.log(`${summary(c.name.padEnd(40), m)}  ratio ${(m.requests.average / base.requests.average).toFixed(3)}${cpuText}${boundText}  (rounds: ${rs.map((r) => Math.round(r.requests.average)).join(', ')})`);
}
