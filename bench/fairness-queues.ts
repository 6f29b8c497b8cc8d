import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { composeApp, type AppDeps } from '../src/compose-app.js';
import { loadConfig } from '../src/config.js';
import { AccountService } from '../src/domain/accounts/service.js';
import type { JobView } from '../src/domain/jobs/types.js';
import { BullMqJobQueue } from '../src/infra/jobs/bullmq.js';
import { createDialer, type ConnectFn } from '../src/infra/net/dialer.js';
import { openSqliteStore } from '../src/infra/store/sqlite.js';
import type { Store } from '../src/domain/store.js';
import { JobCancelledError } from '../src/errors.js';

/**
 * Issue 24's queue figures (docs/api.md, "Rate limits": queued jobs and webhook deliveries are taken
 * round-robin between accounts), in one process, on loopback only:
 *
 * - jobs: BUSY_ACCOUNTS free accounts (2 jobs at once each) queue JOBS_PER_ACCOUNT one-port scans
 *   each of a filtered port (its connect never completes: each scan runs its whole timeout,
 *   JOB_S); with NETDIAG_WORKERS=8 they hold every worker. Then another account queues one IP
 *   lookup: how long from its creation to its start (its started_at − created_at), against one
 *   scan's run. Oldest-first made it wait for the backlog (issue 24: 22.9 s behind 12 s scans).
 * - webhooks: BUSY_ACCOUNTS accounts' jobs finish with webhooks to a receiver that never answers
 *   (each attempt runs the whole timeout, HOOK_TIMEOUT_MS); then another account's job finishes
 *   with a webhook to a receiver that answers: how long from its being due (the job's finished_at)
 *   to its arrival, against one attempt's run (issue 24: 38.4 s).
 *
 * The embedded queue on SQLite always; with BENCH_REDIS_URL (a Redis of the bench's own: its keys
 * are left there) the job case on BullMQ too.
 *
 * Run: node --import tsx bench/fairness-queues.ts
 *   (BENCH_JOB_S=4, BENCH_JOBS_PER_ACCOUNT=4, BENCH_BUSY_ACCOUNTS=4, BENCH_HOOK_TIMEOUT_MS=4000, BENCH_REDIS_URL unset)
 */

const JOB_S = Number(process.env.BENCH_JOB_S ?? 4);
const JOBS_PER_ACCOUNT = Number(process.env.BENCH_JOBS_PER_ACCOUNT ?? 4);
const BUSY_ACCOUNTS = Number(process.env.BENCH_BUSY_ACCOUNTS ?? 4);
const HOOK_TIMEOUT_MS = Number(process.env.BENCH_HOOK_TIMEOUT_MS ?? 4_000);
/** Time given to the busy accounts' work to take every worker (every delivery slot) first. */
const SETTLE_MS = 1_000;
/** Connects to this address never complete (no packet is sent: the socket is never told to connect). */
const FILTERED_HOST = '127.0.0.3';

export interface QueueFigure {
  case: 'jobs' | 'webhooks';
  queue: string;
  /** From due (created; finished for a webhook) to started (arrived). */
  waitedMs: number;
  /** One job's (one attempt's) run. */
  runMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Harness {
  app: FastifyInstance;
  store: Store;
  url: string;
  busy: string[];
  other: string;
  close(): Promise<void>;
}

async function harness(deps: (store: Store) => Partial<AppDeps>): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-'));
  const store = await openSqliteStore(join(dir, 'bench.db'));
  const accounts = new AccountService(store);
  const busy: string[] = [];
  for (let i = 0; i < BUSY_ACCOUNTS; i++) busy.push((await accounts.createAccount({ email: `busy${i}@example.com`, name: `Busy ${i}`, plan: 'free' })).token);
  const other = (await accounts.createAccount({ email: 'other@example.com', name: 'Other', plan: 'free' })).token;
  const connectFn: ConnectFn = (opts) => (opts.host === FILTERED_HOST ? new net.Socket() : net.connect(opts));
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn });
  const config = loadConfig({ DATABASE_URL: 'sqlite::memory:', NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_WORKERS: '8' });
  const app = await composeApp({ config, store, logger: false, dialer, ...deps(store) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as net.AddressInfo;
  return {
    app,
    store,
    url: `http://127.0.0.1:${port}`,
    busy,
    other,
    close: async () => {
      await app.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function createJob(h: Harness, token: string, path: string, body: unknown): Promise<JobView> {
  const res = await fetch(`${h.url}/api${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', prefer: 'respond-async' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as { data: JobView };
  if (res.status !== 202) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json.data;
}

async function waitForJob(h: Harness, token: string, id: string, done: (j: JobView) => boolean): Promise<JobView> {
  for (;;) {
    const res = await fetch(`${h.url}/api/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { data: JobView };
    if (res.status !== 200 && res.status !== 429) throw new Error(`GET /api/jobs/${id} answered ${res.status}: ${JSON.stringify(body)}`);
    if (res.status === 200 && done(body.data)) return body.data;
    // Under the 10 reads a second of one job; the figures come from the job's own times, not from this.
    await sleep(150);
  }
}

/** The job case on one queue: the other account's job waited this long for its start. */
async function jobCase(queue: string, h: Harness): Promise<QueueFigure> {
  try {
    for (const [a, token] of h.busy.entries()) {
      for (let i = 0; i < JOBS_PER_ACCOUNT; i++) await createJob(h, token, '/port/scan', { host: FILTERED_HOST, port: 1_000 + a * 100 + i, timeout: JOB_S });
    }
    await sleep(SETTLE_MS);
    const job = await createJob(h, h.other, '/ip/lookup', { ip: '192.0.2.1' });
    const started = await waitForJob(h, h.other, job.id, (j) => j.started_at !== null);
    return { case: 'jobs', queue, waitedMs: Date.parse(started.started_at!) - Date.parse(started.created_at), runMs: JOB_S * 1000 };
  } finally {
    await h.close();
  }
}

/** The webhook case: the other account's delivery arrived this long after it was due. */
async function webhookCase(): Promise<QueueFigure> {
  const silent = http.createServer(() => undefined);
  let arrived: number | undefined;
  const answering = http.createServer((_req, res) => {
    arrived ??= Date.now();
    res.writeHead(204).end();
  });
  for (const s of [silent, answering]) await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const urlOf = (s: http.Server) => `http://127.0.0.1:${(s.address() as net.AddressInfo).port}/hook`;
  const h = await harness(() => ({ webhookTuning: { timeoutMs: HOOK_TIMEOUT_MS } }));
  try {
    for (const token of h.busy) {
      for (let i = 0; i < JOBS_PER_ACCOUNT; i++) await createJob(h, token, '/ipv6/validate', { ipv6: '::1', webhook_url: urlOf(silent) });
    }
    await sleep(SETTLE_MS);
    const job = await createJob(h, h.other, '/ipv6/validate', { ipv6: '::1', webhook_url: urlOf(answering) });
    const finished = await waitForJob(h, h.other, job.id, (j) => j.finished_at !== null);
    while (arrived === undefined) await sleep(20);
    return { case: 'webhooks', queue: 'embedded, sqlite', waitedMs: arrived - Date.parse(finished.finished_at!), runMs: HOOK_TIMEOUT_MS };
  } finally {
    silent.closeAllConnections();
    answering.closeAllConnections();
    await h.close();
    for (const s of [silent, answering]) await new Promise((resolve) => s.close(resolve));
  }
}

function line(f: QueueFigure): string {
  const what = f.case === 'jobs' ? `another account's job started ${f.waitedMs.toFixed(0)} ms after its creation; one job runs ${f.runMs} ms` : `another account's webhook arrived ${f.waitedMs.toFixed(0)} ms after it was due; one attempt runs ${f.runMs} ms`;
  return `${f.case} (${f.queue}): ${what} -> ${(f.waitedMs / f.runMs).toFixed(2)} runs; aim (within one run): ${f.waitedMs <= f.runMs ? 'met' : 'NOT met'}`;
}

/** Runs every case, prints one line each, and returns the figures (bench/fairness.ts calls it). */
export async function fairnessQueues(opts: { redisUrl?: string | undefined; log?: (line: string) => void } = {}): Promise<QueueFigure[]> {
  const log = opts.log ?? ((l: string) => console.log(l));
  log(`queues: ${BUSY_ACCOUNTS} busy accounts x ${JOBS_PER_ACCOUNT} jobs (free plan: 2 at once each), NETDIAG_WORKERS=8; a job runs ${JOB_S} s, an attempt ${HOOK_TIMEOUT_MS} ms`);
  const figures: QueueFigure[] = [];
  const record = (f: QueueFigure) => {
    figures.push(f);
    log(line(f));
  };
  record(await jobCase('embedded, sqlite', await harness(() => ({}))));
  if (opts.redisUrl) {
    const redisUrl = opts.redisUrl;
    const prefix = `netdiag-bench:${randomBytes(4).toString('hex')}`;
    // Only the queue on Redis: one process, so the accounts' slots and windows stay in it.
    const h = await harness((store) => ({ jobQueue: new BullMqJobQueue({ redisUrl, repo: store.jobs, workers: 8, prefix, cancelReason: () => new JobCancelledError() }) }));
    record(await jobCase('bullmq, sqlite', h));
  }
  record(await webhookCase());
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await fairnessQueues({ redisUrl: process.env.BENCH_REDIS_URL });
}
