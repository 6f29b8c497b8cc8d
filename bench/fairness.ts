import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { IN_FLIGHT_LIMITS } from '../src/domain/accounts/plans.js';
import { RANGE_DEFAULT_TIMEOUT_S } from '../src/domain/ports/index.js';
import { blackholeUnavailable, runInBlackhole } from '../test/domain/ports/fixtures/blackhole.js';
import { fairnessQueues } from './fairness-queues.js';
import { startServer, type ChildServer } from './lib.js';
import { median, quantile } from './stats.js';

/**
 * Issues 15 and 24's figure: account B's one-port scan of an open port, alone and while the
 * A accounts' twenty 1000-port scans of silent (SYN-dropping) ports run between them, in the
 * same run, against the same server. Inside a fresh network namespace whose loopback discards
 * all TCP to 127.0.0.3 (see test/domain/ports/fixtures/blackhole.ts), so A's ports are really
 * filtered and nothing leaves this machine. The A accounts are on the enterprise plan (16
 * probes in flight each), B on free. Four A accounts by default (issue 24: with four, their
 * scans together had every socket of the scanners' budget); BENCH_A_ACCOUNTS=1 is issue 15's
 * case (one account: 16 of its 20 scans run, 4 are refused as "concurrent"). The scans are
 * dealt round-robin: 5 each with four accounts.
 *
 * Run (as root: unshare -n and tc):
 *   node --import tsx bench/fairness.ts
 *   (BENCH_A_ACCOUNTS=4, BENCH_A_SCANS=20 between them, BENCH_A_TIMEOUT_S=3, BENCH_ROUNDS=3, BENCH_B_SAMPLES=20)
 * then the queue cases of bench/fairness-queues.ts (BENCH_REDIS_URL adds BullMQ); BENCH_PART=sockets
 * or BENCH_PART=queues runs one of the two.
 */

/** `sockets` (the neighbour case), `queues` (jobs and webhooks: bench/fairness-queues.ts), or both (default). */
const PART = process.env.BENCH_PART ?? 'all';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const B_SAMPLES = Number(process.env.BENCH_B_SAMPLES ?? 20);
const A_ACCOUNTS = Number(process.env.BENCH_A_ACCOUNTS ?? 4);
/** A's scans, all accounts together. */
const A_SCANS = Number(process.env.BENCH_A_SCANS ?? 20);
/** A's connect timeout per port: the default of scan-range, as a client that names none gets. */
const A_TIMEOUT_S = Number(process.env.BENCH_A_TIMEOUT_S ?? RANGE_DEFAULT_TIMEOUT_S);
const WARMUP_SCANS = 20;
/** Time given to A's scans to fill their share of the sockets before B is measured. */
const A_SETTLE_MS = 500;
const SILENT_HOST = '127.0.0.3';
const A_PORTS = Array.from({ length: 1000 }, (_, i) => i + 1);

interface Item {
  state: string;
  response_time: number | null;
  queued_ms?: number | null;
}

async function post(server: ChildServer, token: string, path: string, body: unknown, signal?: AbortSignal): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
  return { status: res.status, body: await res.json() };
}

/** B's one-port scan: its HTTP round trip, and what the item says of itself. */
async function scanB(server: ChildServer, port: number): Promise<{ ms: number; item: Item }> {
  const started = performance.now();
  const { status, body } = await post(server, server.info.tokenB!, '/api/port/scan', { host: '127.0.0.1', port, timeout: 1 });
  const ms = performance.now() - started;
  if (status !== 200) throw new Error(`B's scan answered ${status}: ${JSON.stringify(body)}`);
  const item = (body as { data: Item }).data;
  if (item.state !== 'open') throw new Error(`B's port is ${item.state}`);
  return { ms, item };
}

function stats(values: number[]): string {
  return `median ${median(values).toFixed(2)} ms, p90 ${quantile(values, 0.9).toFixed(2)} ms, max ${Math.max(...values).toFixed(2)} ms (n=${values.length})`;
}

async function inside(): Promise<void> {
  const listener = net.createServer((s) => s.on('error', () => undefined));
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const openPort = (listener.address() as net.AddressInfo).port;
  const server = await startServer('./servers/two-accounts.ts', { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', BENCH_A_ACCOUNTS: String(A_ACCOUNTS) });
  const tokensA = server.info.tokensA!.split(',');
  try {
    for (let i = 0; i < WARMUP_SCANS; i++) await scanB(server, openPort);
    const alone: number[] = [];
    const loaded: number[] = [];
    const loadedQueued: number[] = [];
    const loadedResponse: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < B_SAMPLES; i++) alone.push((await scanB(server, openPort)).ms);

      const hangUp = new AbortController();
      const statuses: number[] = [];
      const aScans = Array.from({ length: A_SCANS }, (_, i) =>
        post(server, tokensA[i % tokensA.length]!, '/api/port/scan-range', { host: SILENT_HOST, ports: A_PORTS, timeout: A_TIMEOUT_S }, hangUp.signal)
          .then((r) => void statuses.push(r.status))
          .catch(() => undefined),
      );
      await new Promise((r) => setTimeout(r, A_SETTLE_MS));
      for (let i = 0; i < B_SAMPLES; i++) {
        const { ms, item } = await scanB(server, openPort);
        loaded.push(ms);
        loadedQueued.push(item.queued_ms ?? NaN);
        loadedResponse.push(item.response_time ?? NaN);
      }
      const refused = statuses.filter((s) => s === 429).length;
      const finished = statuses.filter((s) => s === 200).length;
      console.log(
        `round ${round + 1}: A's ${A_SCANS} scans (${A_ACCOUNTS} account(s)): ${refused} refused as concurrent, ${finished} finished while B's ${B_SAMPLES} scans ran` +
          ` (each A is allowed ${IN_FLIGHT_LIMITS.enterprise} at once)`,
      );
      hangUp.abort();
      await Promise.all(aScans);
      // Let the server see the hang-ups and free A's sockets before B is measured alone again.
      await new Promise((r) => setTimeout(r, A_SETTLE_MS));
    }
    console.log(`B alone, POST /api/port/scan of an open port (HTTP round trip): ${stats(alone)}`);
    console.log(`B while ${A_ACCOUNTS} A account(s)' ${A_SCANS} scans of 1000 silent ports run (timeout ${A_TIMEOUT_S} s):  ${stats(loaded)}`);
    console.log(`  its queued_ms: ${stats(loadedQueued)}; its response_time: ${stats(loadedResponse)}`);
    const ratio = median(loaded) / median(alone);
    console.log(`ratio of medians (loaded / alone): ${ratio.toFixed(2)}x`);
    // The maxima are this machine's noise as much as ours: B alone has them too.
    console.log(`aim (ratio <= 2x, loaded median < 300 ms): ${ratio <= 2 && median(loaded) < 300 ? 'met' : 'NOT met'}`);
  } finally {
    await server.stop();
    listener.close();
  }
}

if (process.argv.includes('--inside')) {
  await inside();
} else {
  if (PART !== 'queues') {
    const why = blackholeUnavailable();
    if (why) {
      console.log(`sockets: skipped: ${why}`);
    } else {
      console.log(`node ${process.version}, ${ROUNDS} rounds of ${B_SAMPLES} samples each way`);
      const out = await runInBlackhole(fileURLToPath(import.meta.url), ['--inside'], { host: SILENT_HOST });
      process.stdout.write(out.stdout);
      if (out.code !== 0) throw new Error(`the run failed: ${out.stderr}`);
    }
  }
  // Issue 24's queue cases: another account's job and webhook delivery behind four backlogs.
  if (PART !== 'sockets') await fairnessQueues({ redisUrl: process.env.BENCH_REDIS_URL });
}
