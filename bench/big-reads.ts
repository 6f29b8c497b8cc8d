/**
 * Issue 38: reading back a finished 65535-port job must not stall the server for everyone else.
 * One server process (the real app over a fresh SQLite file) holds one finished full-range scan
 * of 127.0.0.1 run as a job; a second process polls `GET /healthz` every 20 ms on its own
 * connection and notes how long each answer took; this process fires ten concurrent reads of the
 * job of one kind at a time (the API's JSON, its NDJSON stream, the dashboard's CSV download,
 * the job's page), reads each body to its end, and samples the server's RSS every 10 ms.
 *
 * Reported per kind: the worst /healthz wait while the ten reads ran, the server's RSS growth
 * over what it was before them, the time the ten took, and each answer's size.
 * Aim: /healthz never waits over 100 ms; RSS grows under 100 MB.
 *   node --import tsx bench/big-reads.ts      (BENCH_ROUNDS=1 by default; BIG_READS_ONLY=csv
 *   measures only the kinds whose name has that in it; BIG_READS_TRACE=1 prints GC pauses)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

const ROLE = process.env.BIG_READS_ROLE;
const TASKSET = (() => {
  try {
    execFileSync('taskset', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
/** Reads fired at once per kind. */
const CONCURRENT = 10;
/** How often the poller asks /healthz (after the last answer), and the server's RSS is sampled. */
const HEALTH_EVERY_MS = 20;
const RSS_EVERY_MS = 10;
/** Between kinds: the per-job read limit (10 a second) starts over, and the heap settles. */
const PAUSE_MS = 1500;
const PASSWORD = 'correct horse battery staple';
const EMAIL = 'bench@example.com';

if (ROLE === 'server') await serve();
else if (ROLE === 'poller') await poll(process.env.BIG_READS_URL!);
else await drive();

/** The server: the real app, one account with a password, and a finished scan of every port of 127.0.0.1. */
async function serve(): Promise<void> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { composeApp } = await import('../src/compose-app.js');
  const { loadConfig } = await import('../src/config.js');
  const { AccountService } = await import('../src/domain/accounts/service.js');
  const { hashPassword } = await import('../src/domain/accounts/passwords.js');
  const { openStore } = await import('../src/infra/store/index.js');

  if (process.env.BIG_READS_TRACE === '1') {
    // Where a stall comes from: each garbage collection over 10 ms, on stderr.
    const { PerformanceObserver } = await import('node:perf_hooks');
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.duration > 10) process.stderr.write(`gc ${(e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind} ${e.duration.toFixed(1)} ms\n`);
    }).observe({ entryTypes: ['gc'] });
  }
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-'));
  const config = loadConfig({ ...process.env, DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'silent', NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  const store = await openStore(config.databaseUrl);
  const accounts = new AccountService(store);
  const { token } = await accounts.createAccount({ email: EMAIL, name: 'Bench', plan: 'enterprise' });
  const account = (await store.accounts.findByEmail(EMAIL))!;
  await store.accounts.setPasswordHash(account.id, await hashPassword(PASSWORD));
  const app = await composeApp({ config, store, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();

  // Every port of loopback as a job, as a client would start it: its items complete out of order.
  const started = await app.inject({
    method: 'POST',
    url: '/api/port/scan-range',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', prefer: 'respond-async' },
    payload: JSON.stringify({ host: '127.0.0.1', ports: '1-65535', timeout: 1 }),
  });
  const jobId = (started.json() as { data: { id: string } }).data.id;
  for (;;) {
    const job = await store.jobs.find(jobId);
    if (job?.status === 'succeeded' && job.progress_done === 65535) break;
    if (job && job.status !== 'queued' && job.status !== 'running') throw new Error(`the scan ended ${job.status}: ${job.error}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const batches = await store.jobs.itemBatches(jobId, 0, 1_000_000);
  const port = typeof address === 'object' && address ? address.port : 0;
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}`, token, jobId, batches: String(batches.length) }) + '\n');
  process.once('SIGTERM', () =>
    void app.close().then(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }),
  );
}

/** The poller: GET /healthz on one kept-alive connection, 20 ms after each answer; a line `<start epoch ms> <wait ms>` per answer. */
async function poll(url: string): Promise<void> {
  const http = await import('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const once = () =>
    new Promise<void>((resolve, reject) => {
      http.get(`${url}/healthz`, { agent }, (res) => {
        res.resume();
        res.once('end', resolve);
      }).once('error', reject);
    });
  for (;;) {
    const at = Date.now();
    const t0 = performance.now();
    await once();
    process.stdout.write(`${at} ${(performance.now() - t0).toFixed(1)}\n`);
    await new Promise((resolve) => setTimeout(resolve, HEALTH_EVERY_MS));
  }
}

async function drive(): Promise<void> {
  const { spawn } = await import('node:child_process');
  const http = await import('node:http');
  const { signIn: signInAs, startServer } = await import('./lib.js');
  const { median } = await import('./stats.js');
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);

  const signIn = (url: string) => signInAs(url, EMAIL, PASSWORD);

  const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

  /** A GET whose body is read to its end and dropped (node:http: cheaper than fetch for this process's core): its status and size in bytes. */
  const get = (url: string, headers: Record<string, string>): Promise<{ status: number; bytes: number }> =>
    new Promise((resolve, reject) => {
      http.get(url, { headers }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
        res.once('error', reject);
      }).once('error', reject);
    });

  interface Figures {
    worstHealthMs: number;
    rssGrowthMb: number;
    tookMs: number;
    bytes: number;
  }
  const results = new Map<string, Figures[]>();

  for (let round = 0; round < ROUNDS; round++) {
    const server = await startServer('./big-reads.ts', { BIG_READS_ROLE: 'server' });
    // This process is pinned to a core of its own where taskset exists (bench/lib.ts); the
    // poller is not: it would wait for this process's reading, not for the server.
    const pollerArgs = [process.execPath, '--import', 'tsx', new URL(import.meta.url).pathname];
    const poller = spawn(TASKSET ? 'taskset' : pollerArgs[0]!, TASKSET ? ['-c', `0-${cpus().length - 1}`, ...pollerArgs] : pollerArgs.slice(1), {
      env: { ...process.env, BIG_READS_ROLE: 'poller', BIG_READS_URL: server.url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const samples: Array<{ at: number; wait: number }> = [];
    let rest = '';
    poller.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop()!;
      for (const l of lines) {
        const [at, wait] = l.split(' ').map(Number);
        samples.push({ at: at!, wait: wait! });
      }
    });
    try {
      const pid = server.child.pid!;
      const { token, jobId } = server.info;
      const cookie = await signIn(server.url);
      console.log(`round ${round + 1}: job ${jobId}, ${server.info.batches} stored batches`);
      const kinds: Array<{ name: string; path: string; headers: Record<string, string> }> = [
        { name: 'API JSON', path: `/api/jobs/${jobId}`, headers: { authorization: `Bearer ${token}` } },
        { name: 'API NDJSON', path: `/api/jobs/${jobId}`, headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' } },
        { name: 'API SSE', path: `/api/jobs/${jobId}`, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
        { name: 'page CSV', path: `/jobs/${jobId}/csv`, headers: { cookie } },
        { name: 'page JSON', path: `/jobs/${jobId}/json`, headers: { cookie } },
        { name: 'job page', path: `/jobs/${jobId}`, headers: { cookie } },
      ];
      const only = process.env.BIG_READS_ONLY?.toLowerCase();
      // The poller's first answers, and the server's first requests, before anything is measured.
      while (samples.length < 10) await new Promise((resolve) => setTimeout(resolve, HEALTH_EVERY_MS));
      for (const kind of kinds.filter((k) => only === undefined || k.name.toLowerCase().includes(only))) {
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
        const before = rssOf(pid);
        let peak = before;
        const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), RSS_EVERY_MS);
        const from = Date.now();
        const t0 = performance.now();
        const sizes = await Promise.all(
          Array.from({ length: CONCURRENT }, async () => {
            const { status, bytes } = await get(`${server.url}${kind.path}`, kind.headers);
            if (status !== 200) throw new Error(`${kind.name}: ${status}`);
            return bytes;
          }),
        );
        const tookMs = performance.now() - t0;
        const to = Date.now();
        clearInterval(sampler);
        peak = Math.max(peak, rssOf(pid));
        // The poller's answer in flight as the reads end counts too.
        await new Promise((resolve) => setTimeout(resolve, 200));
        const waits = samples.filter((s) => s.at >= from && s.at <= to).map((s) => s.wait);
        const figures = { worstHealthMs: Math.max(0, ...waits), rssGrowthMb: peak - before, tookMs, bytes: sizes[0]! };
        (results.get(kind.name) ?? results.set(kind.name, []).get(kind.name)!).push(figures);
        console.log(
          `  ${kind.name.padEnd(11)} ${CONCURRENT} at once: worst /healthz ${figures.worstHealthMs.toFixed(1)} ms (${waits.length} polls), ` +
            `RSS growth ${figures.rssGrowthMb.toFixed(1)} MB (from ${before.toFixed(0)} MB), took ${tookMs.toFixed(0)} ms, ${(figures.bytes / 1e6).toFixed(2)} MB each`,
        );
      }
    } finally {
      poller.kill('SIGTERM');
      await server.stop();
    }
  }
  if (ROUNDS > 1) {
    console.log(`median of ${ROUNDS} rounds:`);
    for (const [name, fs] of results) {
      console.log(
        `  ${name.padEnd(11)} worst /healthz ${median(fs.map((f) => f.worstHealthMs)).toFixed(1)} ms (max ${Math.max(...fs.map((f) => f.worstHealthMs)).toFixed(1)}), ` +
          `RSS growth ${median(fs.map((f) => f.rssGrowthMb)).toFixed(1)} MB (max ${Math.max(...fs.map((f) => f.rssGrowthMb)).toFixed(1)})`,
      );
    }
  }
}
