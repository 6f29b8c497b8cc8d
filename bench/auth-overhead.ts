import { load, startServer, summary, variants, type ChildServer, type LoadResult } from './lib.js';
import { median } from './stats.js';

/**
 * Issues 2 and 3: requests/s of cheap authenticated requests through the whole pipeline
 * (authentication, rate limiting, usage recording with group commit, the envelope) against bare
 * Fastify answering the same JSON, in the same run.
 *
 * Every round starts a fresh process for every case, measures it and stops it, cases one after another:
 * on this VM a whole process can settle faster or slower than another of the same program (how
 * V8 optimised its hot code), so a figure from one process per server would be decided by luck.
 * The median over rounds is reported.
 *   node --import tsx bench/auth-overhead.ts     (BENCH_SECONDS, BENCH_ROUNDS, BENCH_CASES to change)
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

interface Case {
  name: string;
  script: string;
  env?: Record<string, string>;
  run: (server: ChildServer) => Promise<LoadResult>;
}
const auth = (token: string | undefined) => ({ authorization: `Bearer ${token}` });
const getUser = (s: ChildServer) => load(`${s.url}/api/user`, s.info.token ? auth(s.info.token) : {}, undefined, {}, s);
const expandBody = JSON.stringify({ ipv6: '2001:db8::1' });

const bare: Case = { name: 'bare Fastify GET /api/user (same JSON)', script: './servers/bare.ts', run: getUser };
// Bare again, each response held until the next iteration of the event loop as group commit holds
// netdiag's: on a VM where waking up is dear, batching the sends alone changes the figure.
const bareHeld: Case = { name: 'bare Fastify, sends held an iteration', script: './servers/bare.ts', env: { BENCH_DEFER: '1' }, run: getUser };
const cases: Case[] = [
  { name: 'netdiag GET /api/user', script: './servers/netdiag.ts', run: getUser },
  // Issue 2's share: request id, authentication, route and envelope; no limiter, no usage hook.
  { name: 'netdiag GET /api/user, auth + envelope', script: './servers/netdiag.ts', env: { BENCH_PARTS: 'auth' }, run: getUser },
  // The split used before: issue 3's hooks and headers stay, their counting and writing do not.
  { name: 'netdiag GET /api/user, admit-all', script: './servers/netdiag.ts', env: { BENCH_PARTS: 'admit-all' }, run: getUser },
  {
    name: 'netdiag POST /api/ipv6/expand',
    script: './servers/netdiag.ts',
    run: (s) => load(`${s.url}/api/ipv6/expand`, { ...auth(s.info.token), 'content-type': 'application/json' }, undefined, { method: 'POST', body: expandBody }, s),
  },
  { name: 'netdiag GET /api/user, request log on', script: './servers/netdiag.ts', env: { BENCH_LOG: '1' }, run: getUser },
  // GET /metrics on: every response counted (route, method, status) and timed in the histogram.
  { name: 'netdiag GET /api/user, metrics on', script: './servers/netdiag.ts', env: { NETDIAG_METRICS_TOKEN: 'bench-metrics-token-0123456789' }, run: getUser },
];

// BENCH_VS='label|NAME=value,…;…' (bench/lib.ts variants): netdiag GET /api/user again per entry,
// its server with that environment (BENCH_ROOT: another checkout): a trick with and without.
for (const v of variants()) cases.push({ name: `netdiag GET /api/user, ${v.label}`, script: './servers/netdiag.ts', env: v.env, run: getUser });
// BENCH_CASES=regex keeps only the matching cases; the two baselines always run.
const only = process.env.BENCH_CASES ? new RegExp(process.env.BENCH_CASES) : null;
const chosen = [bare, bareHeld, ...cases.filter((c) => !only || only.test(c.name))];
const results = new Map<string, LoadResult[]>(chosen.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const c of chosen) {
    const server = await startServer(c.script, c.env);
    try {
      results.get(c.name)!.push(await c.run(server));
    } finally {
      await server.stop();
    }
  }
}

/** The run whose requests/s is the median of the rounds'. */
const medianRun = (rs: LoadResult[]) => [...rs].sort((a, b) => a.requests.average - b.requests.average)[Math.floor(rs.length / 2)]!;
const cpuOf = (rs: LoadResult[]) => {
  const xs = rs.map((r) => r.serverCpuPerRequest).filter((x): x is number => x !== null);
  return xs.length > 0 ? median(xs) : null;
};
const baseline = medianRun(results.get(bare.name)!);
const baselineCpu = cpuOf(results.get(bare.name)!);
const held = medianRun(results.get(bareHeld.name)!);
for (const c of chosen) {
  const rs = results.get(c.name)!;
  const m = medianRun(rs);
  const ratio = (m.requests.average / baseline.requests.average).toFixed(3);
  const heldRatio = (m.requests.average / held.requests.average).toFixed(3);
  const cpu = cpuOf(rs);
  // Bare Fastify's CPU per request over this case's: the same ratio as requests/s would be if
  // the server alone were the bottleneck, without the load generator's noise.
  const cpuText = cpu !== null && baselineCpu !== null ? `  server CPU ${cpu.toFixed(1)} µs/request (bare/this ${(baselineCpu / cpu).toFixed(3)})` : '';
  const perRound = rs.map((r) => `${Math.round(r.requests.average)}${r.serverCpuPerRequest !== null ? `/${r.serverCpuPerRequest.toFixed(1)}µs` : ''}`).join(', ');
  console.log(`${summary(c.name.padEnd(40), m)}  ratio ${ratio} (to held sends ${heldRatio})${cpuText}  (rounds: ${perRound})`);
}
