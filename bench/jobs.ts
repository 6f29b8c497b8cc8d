import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import pg from 'pg';
import { composeApp } from '../src/compose-app.js';
import { loadConfig } from '../src/config.js';
import { AccountService } from '../src/domain/accounts/service.js';
import { openPostgresStore } from '../src/infra/store/postgres.js';
import type { Store } from '../src/domain/store.js';
import { silentPorts } from '../test/fixtures/silent-ports.js';
import { freePort } from '../test/helpers/free-port.js';
import { scanAsJob, scanSync } from './job-calls.js';
import { cpuMicros, startServer } from './lib.js';
import { median } from './stats.js';

/**
 * Issue 18's figures, all on this machine's loopback:
 *
 * 1. POST /api/port/scan-range of ports 1-1000 on 127.0.0.1 as a job (Prefer: respond-async,
 *    then its NDJSON stream until the job's last line) against the same scan synchronously,
 *    alternating, on one server process (embedded queue, SQLite) with the client in this one;
 *    median ratio over rounds, and the server's CPU per call. Aim ≤ 1.2×.
 * 2. 20 scans of 1000 filtered ports (`timeout: 1`; listeners that never accept, their accept
 *    queues full, so SYNs are dropped) created on an API instance with NETDIAG_WORKERS=0 and run
 *    by one `netdiag worker` process against two, on PostgreSQL (BENCH_DATABASE_URL, a fresh
 *    schema) and a redis-server this bench starts. The jobs belong to 5 accounts, so the
 *    per-account limits (16 jobs, 896 sockets) do not serialise them. Aim: two ≤ 0.6× one.
 *
 *   node --import tsx bench/jobs.ts   (BENCH_ROUNDS=7, BENCH_WORKER_ROUNDS=2, BENCH_DATABASE_URL; BENCH_PART=1 or 2 for one part)
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const WORKER_ROUNDS = Number(process.env.BENCH_WORKER_ROUNDS ?? 2);
const PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BIN = fileURLToPath(new URL('../bin/netdiag.js', import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LOOPBACK = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' };

async function listenApp(store: Store, env: Record<string, string>) {
  const app = await composeApp({ config: loadConfig({ DATABASE_URL: 'sqlite::memory:', ...LOOPBACK, ...env }), store, logger: false, limiter: null });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
  return { app, base };
}

const post = (base: string, token: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(base + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

// 1. A job against the synchronous call, on a server in its own process (as `npm start` runs it:
// bench/servers/netdiag.ts, SQLite, the embedded queue), the client in this one.
async function jobVsSync(): Promise<void> {
  const server = await startServer('./servers/netdiag.ts', LOOPBACK);
  const { url: base, info } = server;
  const token = info.token!;
  const sync = () => scanSync(base, token);
  const job = () => scanAsJob(base, token);
  /** Wall time and the server's CPU time (µs, from /proc) of one call. */
  const measured = async (call: () => Promise<number>) => {
    const cpu0 = cpuMicros(server.child.pid);
    const ms = await call();
    const cpu1 = cpuMicros(server.child.pid);
    return { ms, cpuMs: cpu0 === null || cpu1 === null ? NaN : (cpu1 - cpu0) / 1000 };
  };
  try {
    for (let i = 0; i < 3; i++) {
      await sync();
      await job();
    }
    const s: { ms: number; cpuMs: number }[] = [];
    const j: { ms: number; cpuMs: number }[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      s.push(await measured(sync));
      j.push(await measured(job));
    }
    const ratios = s.map((x, i) => j[i]!.ms / x.ms);
    const cpu = (xs: { cpuMs: number }[]) => median(xs.map((x) => x.cpuMs)).toFixed(0);
    console.log(
      `1. 1000-port loopback scan, ${ROUNDS} rounds: synchronous median ${median(s.map((x) => x.ms)).toFixed(0)} ms (server CPU ${cpu(s)} ms), ` +
        `as a job (create + NDJSON stream to the end) median ${median(j.map((x) => x.ms)).toFixed(0)} ms (server CPU ${cpu(j)} ms); ` +
        `median ratio job/sync ${median(ratios).toFixed(2)}×  (ratios: ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
    );
  } finally {
    await server.stop();
  }
}

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      err += d;
      if (err.includes('netdiag worker:')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${err}`)));
  });
}

// 2. One worker process against two.
async function workers(): Promise<void> {
  const redisPort = await freePort();
  const redisServer = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const redisUrl = `redis://127.0.0.1:${redisPort}/0`;
  const ping = new Redis(redisUrl, { retryStrategy: () => 50 });
  ping.on('error', () => undefined);
  for (;;) if (await ping.ping().then(() => true, () => false)) break;
  ping.disconnect();
  const schema = `nd_bench_jobs_${process.pid}`;
  const store = await openPostgresStore(PG_URL, { schema });
  const accounts = new AccountService(store);
  const tokens: string[] = [];
  for (let i = 0; i < 5; i++) tokens.push((await accounts.createAccount({ email: `w${i}@example.com`, name: `W${i}`, plan: 'enterprise' })).token);
  const silent = await silentPorts(1000);
  const { app, base } = await listenApp(store, { REDIS_URL: redisUrl, NETDIAG_WORKERS: '0' });
  const workerEnv = { ...LOOPBACK, REDIS_URL: redisUrl, DATABASE_URL: `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`, LOG_LEVEL: 'warn', LOG_FORMAT: 'json' };
  const body = { host: '127.0.0.1', ports: silent.ports, timeout: 1 };
  const times = new Map<number, number[]>([[1, []], [2, []]]);
  try {
    for (let round = 0; round < WORKER_ROUNDS; round++) {
      for (const n of [1, 2]) {
        const procs = await Promise.all(Array.from({ length: n }, () => startWorker(workerEnv)));
        const t0 = performance.now();
        const ids = await Promise.all(
          Array.from({ length: 20 }, async (_, i) => {
            const res = await post(base, tokens[i % tokens.length]!, '/api/port/scan-range', body, { prefer: 'respond-async' });
            if (res.status !== 202) throw new Error(`create: ${res.status} ${await res.text()}`);
            return ((await res.json()) as { data: { id: string } }).data.id;
          }),
        );
        for (;;) {
          const rows = await Promise.all(ids.map((id) => store.jobs.find(id)));
          if (rows.every((r) => r?.status === 'succeeded')) break;
          if (rows.some((r) => r?.status === 'failed' || r?.status === 'cancelled')) throw new Error('a job did not succeed');
          await sleep(50);
        }
        const ms = performance.now() - t0;
        times.get(n)!.push(ms);
        console.log(`   round ${round + 1}, ${n} worker${n > 1 ? 's' : ''}: 20 × 1000 filtered ports in ${(ms / 1000).toFixed(2)} s`);
        await Promise.all(procs.map((p) => new Promise((r) => (p.once('exit', r), p.kill('SIGTERM')))));
      }
    }
    const one = median(times.get(1)!);
    const two = median(times.get(2)!);
    console.log(`2. 20 scans of 1000 filtered ports (timeout 1 s), 5 accounts: one worker median ${(one / 1000).toFixed(2)} s, two workers ${(two / 1000).toFixed(2)} s; two/one ${(two / one).toFixed(2)}×`);
  } finally {
    await app.close();
    await store.close();
    silent.close();
    redisServer.kill('SIGKILL');
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`drop schema if exists "${schema}" cascade`);
    await client.end();
  }
}

// BENCH_PART=1 or 2 runs that part alone.
const PART = process.env.BENCH_PART;
if (PART !== '2') await jobVsSync();
if (PART !== '1') await workers();
