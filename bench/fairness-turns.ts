import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';

/**
 * Issue 38's fairness figures (docs/api.md, "Rate limits": another account's job starts within 2 s
 * whatever the size or number of the jobs ahead of it), against ports that drop SYNs, and its
 * resume figure (a job run again after a lost lease goes on from where it was).
 *
 * The dropping host is a network namespace of the bench's own, not the host's loopback: a veth
 * pair 10.250.38.1/30 (here) - 10.250.38.2/30 (the namespace), whose answers to 10.250.38.1 are
 * routed into a blackhole inside the namespace, so every SYN to 10.250.38.2 goes unanswered.
 * NETDIAG_ALLOW_TARGETS opens exactly 10.250.38.2/32. The namespace is removed at the end (and
 * on SIGINT/SIGTERM). Needs root (ip netns).
 *
 * - turns: sixteen full-range scans (timeout 2 s) from one enterprise account, then from four free
 *   accounts (four each: 2 at once each), NETDIAG_WORKERS=8; once they hold every worker, another
 *   account submits a 5-second job (a scan of one dropping port, timeout 5): how long from its
 *   creation to its start (started_at - created_at); gave up after BENCH_GIVE_UP_S.
 *   On the embedded queue (SQLite), and on BullMQ with BENCH_REDIS_URL (a key prefix of its own).
 * - lease: one scan of BENCH_LEASE_PORTS dropping ports (timeout 1 s) on two instances sharing a
 *   SQLite file; midway its lease is taken from the instance running it (as a stalled process
 *   loses it); the job is run again by whichever instance looks next. Counts every connect per
 *   port: ports dialled twice (only those in flight at the loss should be), and items stored
 *   twice (none should be).
 * - cluster (with BENCH_DATABASE_URL and BENCH_REDIS_URL): two instances (apps of one process) on
 *   PostgreSQL (a schema of its own, dropped after) and BullMQ, beside two CPU hogs of the
 *   parent's: three scans of BENCH_CLUSTER_PORTS dropping ports and sixty 1-second jobs; every
 *   job's outcome, items stored twice, ports dialled more than once, the small jobs' longest wait.
 *
 * Each case runs in a child process per code tree: this one, and BENCH_BASE_ROOT when set (a
 * worktree of the base commit with node_modules linked in), so both are measured in the same run.
 *
 * Run (root): BENCH_BASE_ROOT=/tmp/base BENCH_REDIS_URL=redis://127.0.0.1:6379/15 node --import tsx bench/fairness-turns.ts
 */

const NS = 'nd-bench-turns';
const HOST_IF = 'nd-turns-h';
const NS_IF = 'nd-turns-n';
const HOST_ADDR = '10.250.38.1';
const TARGET = '10.250.38.2';
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 4_000);
const GIVE_UP_S = Number(process.env.BENCH_GIVE_UP_S ?? 30);
const LEASE_PORTS = Number(process.env.BENCH_LEASE_PORTS ?? 6_000);
const CLUSTER_PORTS = Number(process.env.BENCH_CLUSTER_PORTS ?? 4_000);
/** When the lease is taken from the running instance, after the scan's start. */
const LEASE_LOSS_MS = 3_000;
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function sh(...args: string[]): void {
  execFileSync(args[0]!, args.slice(1), { stdio: ['ignore', 'ignore', 'inherit'] });
}

function removeNamespace(): void {
  try {
    execFileSync('ip', ['netns', 'del', NS], { stdio: 'ignore' });
  } catch {
    // not there
  }
  try {
    execFileSync('ip', ['link', 'del', HOST_IF], { stdio: 'ignore' });
  } catch {
    // went with the namespace
  }
}

function makeNamespace(): void {
  removeNamespace();
  sh('ip', 'netns', 'add', NS);
  sh('ip', 'link', 'add', HOST_IF, 'type', 'veth', 'peer', 'name', NS_IF);
  sh('ip', 'link', 'set', NS_IF, 'netns', NS);
  sh('ip', 'addr', 'add', `${HOST_ADDR}/30`, 'dev', HOST_IF);
  sh('ip', 'link', 'set', HOST_IF, 'up');
  sh('ip', 'netns', 'exec', NS, 'ip', 'addr', 'add', `${TARGET}/30`, 'dev', NS_IF);
  sh('ip', 'netns', 'exec', NS, 'ip', 'link', 'set', NS_IF, 'up');
  // Its SYN-ACKs and RSTs to us go nowhere: from here, every port of TARGET drops SYNs.
  sh('ip', 'netns', 'exec', NS, 'ip', 'route', 'add', 'blackhole', `${HOST_ADDR}/32`);
}

// ---------------------------------------------------------------------------------------------
// The child: one case on one code tree.

interface Tree {
  composeApp: (deps: Record<string, unknown>) => Promise<import('fastify').FastifyInstance>;
  loadConfig: (env: Record<string, string>) => Record<string, unknown>;
  AccountService: new (store: unknown) => { createAccount(a: { email: string; name: string; plan: string }): Promise<{ token: string }> };
  openSqliteStore: (path: string) => Promise<import('../src/domain/store.js').Store>;
  openPostgresStore: (url: string, opts: { schema: string }) => Promise<import('../src/domain/store.js').Store>;
  BullMqJobQueue: new (o: Record<string, unknown>) => unknown;
  JobCancelledError: new () => Error;
  createDialer: (config: Record<string, unknown>, overrides: Record<string, unknown>) => unknown;
}

async function loadTree(root: string): Promise<Tree> {
  const m = (p: string) => import(pathToFileURL(join(root, p)).href) as Promise<Record<string, unknown>>;
  // composeApp moved out of src/compose.ts into src/compose-app.ts; older trees still have it there.
  const composeAppFile = existsSync(join(root, 'src/compose-app.ts')) ? 'src/compose-app.ts' : 'src/compose.ts';
  const [compose, config, accounts, sqlite, bullmq, errors, dialer, postgres] = await Promise.all([
    m(composeAppFile),
    m('src/config.ts'),
    m('src/domain/accounts/service.ts'),
    m('src/infra/store/sqlite.ts'),
    m('src/infra/jobs/bullmq.ts'),
    m('src/errors.ts'),
    m('src/infra/net/dialer.ts'),
    m('src/infra/store/postgres.ts'),
  ]);
  return {
    composeApp: compose.composeApp as Tree['composeApp'],
    loadConfig: config.loadConfig as Tree['loadConfig'],
    AccountService: accounts.AccountService as Tree['AccountService'],
    openSqliteStore: sqlite.openSqliteStore as Tree['openSqliteStore'],
    BullMqJobQueue: bullmq.BullMqJobQueue as Tree['BullMqJobQueue'],
    JobCancelledError: errors.JobCancelledError as Tree['JobCancelledError'],
    createDialer: dialer.createDialer as Tree['createDialer'],
    openPostgresStore: postgres.openPostgresStore as Tree['openPostgresStore'],
  };
}

interface JobView {
  id: string;
  status: string;
  created_at: string;
  started_at: string | null;
  result: unknown;
  progress: { done: number; total: number };
}

function client(url: string) {
  const call = async (token: string, method: string, path: string, body?: unknown, async = false): Promise<{ status: number; data: JobView }> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (async) headers.prefer = 'respond-async';
    const res = await fetch(`${url}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const json = (await res.json()) as { data: JobView };
    return { status: res.status, data: json.data };
  };
  return {
    async create(token: string, path: string, body: unknown): Promise<JobView> {
      const r = await call(token, 'POST', `/api${path}`, body, true);
      if (r.status !== 202) throw new Error(`${path} answered ${r.status}: ${JSON.stringify(r.data)}`);
      return r.data;
    },
    async read(token: string, id: string): Promise<JobView | undefined> {
      const r = await call(token, 'GET', `/api/jobs/${id}`);
      return r.status === 200 ? r.data : undefined;
    },
    cancel: (token: string, id: string) => call(token, 'DELETE', `/api/jobs/${id}`),
  };
}

async function listen(app: import('fastify').FastifyInstance): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;
}

/** The turns case: ms from the other account's job's creation to its start; null when it had not started after GIVE_UP_S. */
async function turnsCase(tree: Tree, queue: 'embedded' | 'bullmq', accountsCase: 'enterprise' | 'free'): Promise<{ waitedMs: number | null }> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-turns-'));
  const store = await tree.openSqliteStore(join(dir, 'bench.db'));
  const accounts = new tree.AccountService(store);
  const busy: string[] = [];
  if (accountsCase === 'enterprise') busy.push((await accounts.createAccount({ email: 'e@example.com', name: 'E', plan: 'enterprise' })).token);
  else for (let i = 0; i < 4; i++) busy.push((await accounts.createAccount({ email: `f${i}@example.com`, name: `F${i}`, plan: 'free' })).token);
  const other = (await accounts.createAccount({ email: 'o@example.com', name: 'O', plan: 'free' })).token;
  const config = tree.loadConfig({ DATABASE_URL: 'sqlite::memory:', NETDIAG_ALLOW_TARGETS: `${TARGET}/32`, NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_WORKERS: '8' });
  const redisUrl = process.env.BENCH_REDIS_URL;
  const prefix = `netdiag-bench-turns:${randomBytes(4).toString('hex')}`;
  const jobQueue =
    queue === 'bullmq' ? new tree.BullMqJobQueue({ redisUrl, repo: store.jobs, workers: 8, prefix, cancelReason: () => new tree.JobCancelledError() }) : undefined;
  const app = await tree.composeApp({ config, store, logger: false, ...(jobQueue ? { jobQueue } : {}) });
  const api = client(await listen(app));
  const created: Array<[string, string]> = [];
  try {
    for (let i = 0; i < 16; i++) {
      const token = busy[i % busy.length]!;
      created.push([token, (await api.create(token, '/port/scan-range', { host: TARGET, ports: '1-65535', timeout: 2 })).id]);
    }
    await sleep(SETTLE_MS);
    const job = await api.create(other, '/port/scan', { host: TARGET, port: 9, timeout: 5 });
    created.push([other, job.id]);
    const giveUp = Date.now() + GIVE_UP_S * 1000;
    for (;;) {
      const view = await api.read(other, job.id);
      if (view?.started_at) return { waitedMs: Date.parse(view.started_at) - Date.parse(view.created_at) };
      if (Date.now() > giveUp) return { waitedMs: null };
      await sleep(120);
    }
  } finally {
    for (const [token, id] of created) await api.cancel(token, id).catch(() => undefined);
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    if (redisUrl && queue === 'bullmq') {
      const { Redis } = await import('ioredis');
      const redis = new Redis(redisUrl);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  }
}

/** Connects that count themselves per port: how many times each port was dialled. */
function countingConnect(): { dials: Map<number, number>; connectFn: (opts: net.TcpNetConnectOpts) => net.Socket } {
  const dials = new Map<number, number>();
  const connectFn = (opts: net.TcpNetConnectOpts) => {
    dials.set(Number(opts.port), (dials.get(Number(opts.port)) ?? 0) + 1);
    return net.connect(opts);
  };
  return { dials, connectFn };
}

/** A dialer that may reach TARGET only, resolving nothing, its connects through `connectFn`. */
function targetDialer(tree: Tree, connectFn: (opts: net.TcpNetConnectOpts) => net.Socket) {
  return tree.createDialer({ allowTargets: [`${TARGET}/32`], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn });
}

/** The lease case: a scan whose lease is lost midway, run again by one of two instances; connects and items counted per port. */
async function leaseCase(tree: Tree): Promise<{ ports: number; dials: number; dialledTwice: number; items: number; storedTwice: number; seconds: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-lease-'));
  const path = join(dir, 'bench.db');
  const stores = [await tree.openSqliteStore(path), await tree.openSqliteStore(path)];
  const token = (await new tree.AccountService(stores[0]).createAccount({ email: 'e@example.com', name: 'E', plan: 'enterprise' })).token;
  const { dials, connectFn } = countingConnect();
  const apps: Array<import('fastify').FastifyInstance> = [];
  const urls: string[] = [];
  try {
    for (const store of stores) {
      const config = tree.loadConfig({ DATABASE_URL: 'sqlite::memory:', NETDIAG_ALLOW_TARGETS: `${TARGET}/32`, NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_WORKERS: '8' });
      const dialer = targetDialer(tree, connectFn);
      // Leases renewed every 250 ms: the instance sees its loss at once, as a stalled one does when it wakes.
      const app = await tree.composeApp({ config, store, logger: false, dialer, jobTuning: { renewMs: 250 } });
      apps.push(app);
      urls.push(await listen(app));
    }
    const api = client(urls[0]!);
    const started = Date.now();
    const job = await api.create(token, '/port/scan-range', { host: TARGET, ports: `1-${LEASE_PORTS}`, timeout: 1 });
    await sleep(LEASE_LOSS_MS);
    // As a process that stalled past its lease finds it: another claimer took the job (and its
    // lease lapsed at once, so whichever instance looks next runs it again).
    const now = Date.now() + 60_000;
    const ghost = await stores[0]!.jobs.claim(job.id, 'bench-ghost', now, Date.now() - 1, new Date().toISOString());
    if (!ghost) throw new Error('the lease could not be taken');
    let view: JobView | undefined;
    for (;;) {
      view = await api.read(token, job.id);
      if (view && ['succeeded', 'failed', 'cancelled'].includes(view.status)) break;
      await sleep(250);
    }
    const seconds = (Date.now() - started) / 1000;
    const result = view!.result as Array<{ port: number }>;
    const seen = new Set(result.map((r) => r.port));
    let dialledTwice = 0;
    let total = 0;
    for (const n of dials.values()) {
      total += n;
      if (n > 1) dialledTwice++;
    }
    return { ports: LEASE_PORTS, dials: total, dialledTwice, items: result.length, storedTwice: result.length - seen.size, seconds };
  } finally {
    for (const app of apps) await app.close();
    for (const s of stores) await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The cluster case: two instances (apps, in this one process) on PostgreSQL and BullMQ, beside
 * the parent's CPU hogs; three scans of CLUSTER_PORTS dropping ports each (their own ranges) from
 * one account and sixty one-port scans (timeout 1 s) from four others. Every job's outcome, the
 * items stored twice, the ports dialled more than once, and the small jobs' longest wait.
 */
async function clusterCase(tree: Tree): Promise<Record<string, unknown>> {
  const url = process.env.BENCH_DATABASE_URL!;
  const redisUrl = process.env.BENCH_REDIS_URL!;
  const schema = `nd_bench_turns_${process.pid}`;
  const prefix = `netdiag-bench-cluster:${randomBytes(4).toString('hex')}`;
  const stores = [await tree.openPostgresStore(url, { schema })];
  stores.push(await tree.openPostgresStore(url, { schema }));
  const accounts = new tree.AccountService(stores[0]);
  const scanner = (await accounts.createAccount({ email: 's@example.com', name: 'S', plan: 'enterprise' })).token;
  const small: string[] = [];
  for (let i = 0; i < 4; i++) small.push((await accounts.createAccount({ email: `p${i}@example.com`, name: `P${i}`, plan: 'enterprise' })).token);
  const { dials, connectFn } = countingConnect();
  const apps: Array<import('fastify').FastifyInstance> = [];
  const urls: string[] = [];
  try {
    for (const store of stores) {
      const config = tree.loadConfig({ DATABASE_URL: 'sqlite::memory:', NETDIAG_ALLOW_TARGETS: `${TARGET}/32`, NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_WORKERS: '4' });
      const dialer = targetDialer(tree, connectFn);
      const jobQueue = new tree.BullMqJobQueue({ redisUrl, repo: store.jobs, workers: 4, prefix, cancelReason: () => new tree.JobCancelledError() });
      const app = await tree.composeApp({ config, store, logger: false, dialer, jobQueue });
      apps.push(app);
      urls.push(await listen(app));
    }
    const apis = urls.map(client);
    const started = Date.now();
    const scans: JobView[] = [];
    for (let i = 0; i < 3; i++) {
      const from = i * CLUSTER_PORTS + 1;
      scans.push(await apis[i % 2]!.create(scanner, '/port/scan-range', { host: TARGET, ports: `${from}-${from + CLUSTER_PORTS - 1}`, timeout: 1 }));
    }
    const smalls: Array<[string, JobView]> = [];
    for (let i = 0; i < 60; i++) {
      const token = small[i % small.length]!;
      smalls.push([token, await apis[i % 2]!.create(token, '/port/scan', { host: TARGET, port: 60_000 + i, timeout: 1 })]);
    }
    const finished = async (token: string, id: string): Promise<JobView> => {
      for (;;) {
        const v = await apis[0]!.read(token, id);
        if (v && ['succeeded', 'failed', 'cancelled'].includes(v.status)) return v;
        await sleep(300);
      }
    };
    const smallViews = [];
    for (const [token, j] of smalls) smallViews.push(await finished(token, j.id));
    const scanViews = [];
    for (const j of scans) scanViews.push(await finished(scanner, j.id));
    let storedTwice = 0;
    let items = 0;
    for (const v of scanViews) {
      const ports = (v.result as Array<{ port: number }> | null) ?? [];
      items += ports.length;
      storedTwice += ports.length - new Set(ports.map((p) => p.port)).size;
    }
    let dialledTwice = 0;
    for (const [port, n] of dials) if (port < 60_000 && n > 1) dialledTwice++;
    const waits = smallViews.map((v) => (v.started_at ? Date.parse(v.started_at) - Date.parse(v.created_at) : Infinity));
    return {
      seconds: (Date.now() - started) / 1000,
      statuses: [...scanViews, ...smallViews].reduce<Record<string, number>>((acc, v) => ({ ...acc, [v.status]: (acc[v.status] ?? 0) + 1 }), {}),
      items,
      ports: 3 * CLUSTER_PORTS,
      storedTwice,
      dialledTwice,
      smallWaitMaxMs: Math.max(...waits),
    };
  } finally {
    for (const app of apps) await app.close();
    for (const s of stores) await s.close();
    const { default: pg } = await import('pg');
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(`drop schema if exists "${schema}" cascade`);
    await c.end();
    const { Redis } = await import('ioredis');
    const redis = new Redis(redisUrl);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
}

async function child(root: string, what: string): Promise<void> {
  const tree = await loadTree(root);
  const [kind, queue, accountsCase] = what.split(':');
  const out = kind === 'cluster' ? await clusterCase(tree) : kind === 'lease' ? await leaseCase(tree) : await turnsCase(tree, queue as 'embedded' | 'bullmq', accountsCase as 'enterprise' | 'free');
  process.stdout.write(`${JSON.stringify(out)}\n`);
  // Sockets of cancelled scans may linger in their timeouts: the figure is out.
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// The parent: the namespace, then every case on every tree.

function runChild(root: string, what: string): Promise<Record<string, unknown>> {
  return new Promise((resolvePromise, reject) => {
    const p = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', root, what], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    p.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    p.on('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      try {
        resolvePromise(JSON.parse(line) as Record<string, unknown>);
      } catch {
        reject(new Error(`${what} on ${root} exited ${code}: ${out.slice(-400)}`));
      }
    });
  });
}

async function main(): Promise<void> {
  const trees = [...(process.env.BENCH_BASE_ROOT ? [['base', resolve(process.env.BENCH_BASE_ROOT)]] : []), ['this', ROOT]] as Array<[string, string]>;
  const queues = process.env.BENCH_REDIS_URL ? ['embedded', 'bullmq'] : ['embedded'];
  const only = process.env.BENCH_CASES?.split(',');
  makeNamespace();
  const cleanup = () => {
    removeNamespace();
    process.exit(130);
  };
  process.on('SIGINT', cleanup);
  process.on('SIGTERM', cleanup);
  try {
    console.log(`16 full-range scans (timeout 2 s) of ${TARGET} (SYNs dropped), NETDIAG_WORKERS=8; another free account's 5-second job: creation to start`);
    for (const queue of queues) {
      for (const accountsCase of ['enterprise', 'free']) {
        if (only && !only.includes(`turns:${queue}:${accountsCase}`)) continue;
        for (const [name, root] of trees) {
          const r = await runChild(root, `turns:${queue}:${accountsCase}`);
          const waited = r.waitedMs === null ? `not started after ${GIVE_UP_S} s` : `${String(r.waitedMs)} ms`;
          console.log(`  ${name.padEnd(4)} ${queue.padEnd(8)} ${accountsCase === 'enterprise' ? '1 enterprise account x 16' : '4 free accounts x 4   '}: ${waited}`);
        }
      }
    }
    if (!only || only.includes('lease')) {
      console.log(`a scan of ${LEASE_PORTS} dropping ports (timeout 1 s), its lease lost after ${LEASE_LOSS_MS} ms; two instances on one SQLite file`);
      for (const [name, root] of trees) {
        const r = await runChild(root, 'lease');
        console.log(`  ${name.padEnd(4)} ${String(r.dials)} connects for ${String(r.ports)} ports (${String(r.dialledTwice)} ports dialled twice); ${String(r.items)} items, ${String(r.storedTwice)} stored twice; ${(r.seconds as number).toFixed(1)} s`);
      }
    }
    if (process.env.BENCH_DATABASE_URL && process.env.BENCH_REDIS_URL && (!only || only.includes('cluster'))) {
      console.log(`two instances on PostgreSQL + BullMQ beside two CPU hogs: three scans of ${CLUSTER_PORTS} dropping ports (timeout 1 s) and sixty 1-second jobs`);
      for (const [name, root] of trees) {
        const hogs = [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
        try {
          const r = await runChild(root, 'cluster');
          console.log(`  ${name.padEnd(4)} ${JSON.stringify(r)}`);
        } finally {
          for (const h of hogs) h.kill();
        }
      }
    }
  } finally {
    removeNamespace();
  }
}

if (process.argv[2] === '--child') await child(process.argv[3]!, process.argv[4]!);
else if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
