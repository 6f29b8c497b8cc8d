import { scanAsJob, scanSync } from './job-calls.js';
import { cpuMicros, startServer, type ChildServer } from './lib.js';
import { median } from './stats.js';

/**
 * Issue 18's part 1 for two checkouts in the same run: each gets a server process (as
 * bench/jobs.ts part 1 starts one: bench/servers/netdiag.ts, SQLite, the embedded queue), and every
 * round runs the synchronous 1000-port loopback scan then the same scan as a job (create + NDJSON
 * stream to its last line) on each one after the other, so both see the same machine at the same moments.
 * Prints each one's median job/sync ratio and the server CPU a job costs over the synchronous call.
 *
 *   git worktree add /tmp/base <commit> && ln -s $PWD/node_modules /tmp/base/node_modules
 *   AB=/tmp/base,$PWD BENCH_ROUNDS=100 node --import tsx bench/jobs-ab.ts
 *
 * A checkout may carry server environment after `|` (AB='/tmp/base|NAME=value,…').
 */

const LOOPBACK = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' };
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const WARMUP = 3;
const checkouts = (process.env.AB ?? process.cwd()).split(',');

const servers: ChildServer[] = [];
for (const c of checkouts) {
  const [dir, ...env] = c.split('|');
  servers.push(await startServer(`file://${dir}/bench/servers/netdiag.ts`, { ...LOOPBACK, ...Object.fromEntries(env.map((e) => e.split('='))) }));
}
const sync = (s: ChildServer) => scanSync(s.url, s.info.token!);
const job = (s: ChildServer) => scanAsJob(s.url, s.info.token!);

const figures = checkouts.map(() => ({ sync: [] as number[], job: [] as number[], cpuSync: 0, cpuJob: 0 }));
try {
  for (let round = 0; round < WARMUP + ROUNDS; round++) {
    for (const [i, s] of servers.entries()) {
      const c0 = cpuMicros(s.child.pid) ?? NaN;
      const a = await sync(s);
      const c1 = cpuMicros(s.child.pid) ?? NaN;
      const b = await job(s);
      const c2 = cpuMicros(s.child.pid) ?? NaN;
      if (round < WARMUP) continue;
      const f = figures[i]!;
      f.sync.push(a);
      f.job.push(b);
      f.cpuSync += c1 - c0;
      f.cpuJob += c2 - c1;
    }
  }
} finally {
  for (const s of servers) await s.stop();
}
for (const [i, c] of checkouts.entries()) {
  const f = figures[i]!;
  const ratios = f.sync.map((x, k) => f.job[k]! / x);
  console.log(
    `${c}: ${ROUNDS} rounds, synchronous median ${median(f.sync).toFixed(1)} ms, job ${median(f.job).toFixed(1)} ms, median ratio job/sync ${median(ratios).toFixed(3)}×; ` +
      `server CPU per call: synchronous ${(f.cpuSync / ROUNDS / 1000).toFixed(1)} ms, job ${(f.cpuJob / ROUNDS / 1000).toFixed(1)} ms (+${((f.cpuJob - f.cpuSync) / ROUNDS / 1000).toFixed(1)})`,
  );
}
