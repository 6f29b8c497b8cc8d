/**
 * Issue 17: the dashboard's overview page, `GET /` with a session cookie, at -c 20 against the
 * real app on SQLite with 30 days of usage for the account (six endpoints a day, every outcome),
 * and `GET /api/user` with a bearer token at -c 20 in the same run as the baseline. Each round
 * starts a fresh server process per case (this file again, as the server); medians over rounds.
 * Reported: requests/s, p50/p97.5/p99 latency, server CPU per response (process CPU time over the
 * measured run / responses), and the mean and p99 of Fastify's reply.elapsedTime in the server.
 * Aim: the page's p99 under 50 ms. Issue 28: the job page of a finished 1000-port scan (the
 * Checks result view), same measures; aim: ≤ 50 ms of server time.
 *   node --import tsx bench/dashboard.ts   (BENCH_SECONDS, BENCH_ROUNDS to change)
 */
const SERVER_ROLE = process.env.DASHBOARD_BENCH_ROLE === 'server';
const CONNECTIONS = 20;
const PASSWORD = 'correct horse battery staple';
const EMAIL = 'bench@example.com';

if (SERVER_ROLE) await serve();
else await drive();

/** The server: the real app over a fresh SQLite file, 30 days of usage, one account with a password. */
async function serve(): Promise<void> {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { composeApp } = await import('../src/compose-app.js');
  const { loadConfig } = await import('../src/config.js');
  const { AccountService } = await import('../src/domain/accounts/service.js');
  const { hashPassword } = await import('../src/domain/accounts/passwords.js');
  const { utcDay } = await import('../src/domain/usage/service.js');
  const { openStore } = await import('../src/infra/store/index.js');
  const { MemoryRateLimiter } = await import('../src/infra/ratelimit/memory.js');
  type RateLimiter = import('../src/domain/usage/rate-limit.js').RateLimiter;
  type UsageRecord = import('../src/domain/usage/repository.js').UsageRecord;

  const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-'));
  // Loopback may be scanned: the job page's case scans 1000 ports of 127.0.0.1.
  const config = loadConfig({ ...process.env, DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'silent', NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  const store = await openStore(config.databaseUrl);
  const accounts = new AccountService(store);
  const { token } = await accounts.createAccount({ email: EMAIL, name: 'Bench', plan: 'enterprise' });
  const account = (await store.accounts.findByEmail(EMAIL))!;
  await store.accounts.setPasswordHash(account.id, await hashPassword(PASSWORD));

  // 30 days × 6 endpoints: 180 aggregate rows, a few hundred calls per endpoint and day.
  const endpoints = ['/ip/lookup', '/dns/lookup', '/port/scan', '/proxy/check', '/user', '/usage/stats'];
  const now = Date.now();
  const records: UsageRecord[] = [];
  for (let d = 29; d >= 0; d--) {
    const day = utcDay(now - d * 86_400_000);
    endpoints.forEach((endpoint, k) => {
      const n = 100 + ((d * 37 + k * 53) % 200);
      for (let i = 0; i < n; i++) {
        records.push({ account_id: account.id, day, endpoint, outcome: i % 19 === 0 ? 'failed' : i % 29 === 0 ? 'rate_limited' : 'successful', duration_ms: 2 + ((i * 7) % 40) });
      }
    });
  }
  await store.usage.record(records);

  // The real limiter; the API's calls are admitted against windows too large to fill in a run
  // (as bench/servers/netdiag.ts does), the page peeks with the plan's own limits.
  const BIG = { minute: 1e12, hour: 1e12, day: 1e12 };
  const inner = new MemoryRateLimiter();
  const limiter: RateLimiter = {
    consume: (key, _limits, at) => inner.consume(key, BIG, at),
    peek: (key, limits, at) => inner.peek(key, limits, at),
    close: () => inner.close(),
  };
  const app = await composeApp({ config, store, limiter, logger: false });

  // Fastify's own time per response (onRequest to onResponse), kept for the driver to read.
  const elapsed: number[] = [];
  app.addHook('onResponse', (request, reply, done) => {
    if (!request.url.startsWith('/__bench')) elapsed.push(reply.elapsedTime);
    done();
  });
  app.get('/__bench/elapsed', { config: { page: 'public' } }, async (request) => {
    const sorted = [...elapsed].sort((a, b) => a - b);
    const out = {
      count: sorted.length,
      mean: sorted.reduce((s, x) => s + x, 0) / Math.max(1, sorted.length),
      p99: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
    };
    if ((request.query as { reset?: string }).reset) elapsed.length = 0;
    return out;
  });

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  // A finished 1000-port scan of loopback, run as a job as the Checks form runs it: its page is a case.
  const started = await app.inject({
    method: 'POST',
    url: '/api/port/scan-range',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', prefer: 'respond-async' },
    payload: JSON.stringify({ host: '127.0.0.1', ports: '1-1000', timeout: 1 }),
  });
  const jobId = (started.json() as { data: { id: string } }).data.id;
  while ((await store.jobs.find(jobId))?.status !== 'succeeded') await new Promise((resolve) => setTimeout(resolve, 50));
  elapsed.length = 0;
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`, token, jobId }) + '\n');
  process.once('SIGTERM', () =>
    void app.close().then(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }),
  );
}

/** The load generator: signs in, then measures the page and the API baseline. */
async function drive(): Promise<void> {
  const { default: autocannon } = await import('autocannon');
  const { cpuMicros, signIn: signInAs, startServer, variants, BENCH_SECONDS, WARMUP_SECONDS } = await import('./lib.js');
  const { median } = await import('./stats.js');
  type ChildServer = import('./lib.js').ChildServer;
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

  /** Signs in through the login form as a browser does; the cookies a browser would then send. */
  async function signIn(url: string): Promise<string> {
    const cookie = await signInAs(url, EMAIL, PASSWORD);
    const page = await fetch(`${url}/`, { headers: { cookie } });
    const html = await page.text();
    if (page.status !== 200 || !html.includes('Rate limits')) throw new Error(`the overview did not answer: ${page.status}`);
    return cookie;
  }

  interface Run {
    result: import('autocannon').Result;
    /** Server CPU µs per response over the measured run. */
    cpu: number | null;
    /** Fastify's reply.elapsedTime over the measured run, ms. */
    elapsed: { count: number; mean: number; p99: number };
  }
  const measure = async (s: ChildServer, path: string, headers: Record<string, string>): Promise<Run> => {
    const url = `${s.url}${path}`;
    await autocannon({ url, headers, connections: CONNECTIONS, duration: WARMUP_SECONDS });
    await fetch(`${s.url}/__bench/elapsed?reset=1`);
    const before = cpuMicros(s.child.pid);
    const result = await autocannon({ url, headers, connections: CONNECTIONS, duration: BENCH_SECONDS });
    const after = cpuMicros(s.child.pid);
    const elapsed = (await (await fetch(`${s.url}/__bench/elapsed`)).json()) as Run['elapsed'];
    const served = result.requests.total;
    return { result, cpu: before !== null && after !== null && served > 0 ? (after - before) / served : null, elapsed };
  };

  const overview = async (s: ChildServer) => measure(s, '/', { cookie: await signIn(s.url) });
  const allCases: Array<{ name: string; env?: Record<string, string>; run: (s: ChildServer) => Promise<Run> }> = [
    { name: 'GET / (overview, session cookie)', run: overview },
    {
      name: 'GET /jobs/{id} (1000-port scan)',
      run: async (s) => {
        const cookie = await signIn(s.url);
        const page = await fetch(`${s.url}/jobs/${s.info.jobId}`, { headers: { cookie } });
        if (page.status !== 200 || !(await page.text()).includes('Every port (1000)')) throw new Error(`the job page did not answer: ${page.status}`);
        return measure(s, `/jobs/${s.info.jobId}`, { cookie });
      },
    },
    { name: 'GET /api/user (bearer token)', run: (s) => measure(s, '/api/user', { authorization: `Bearer ${s.info.token}` }) },
    // BENCH_VS (bench/lib.ts variants): the overview again per entry, its server with that environment.
    ...variants().map((v) => ({ name: `GET /, ${v.label}`, env: v.env, run: overview })),
  ];
  // BENCH_CASES=regex keeps only the matching cases.
  const cases = allCases.filter((c) => !process.env.BENCH_CASES || new RegExp(process.env.BENCH_CASES).test(c.name));
  const runs = new Map<string, Run[]>(cases.map((c) => [c.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of cases) {
      const server = await startServer('./dashboard.ts', { DASHBOARD_BENCH_ROLE: 'server', ...c.env });
      try {
        runs.get(c.name)!.push(await c.run(server));
      } finally {
        await server.stop();
      }
    }
  }
  console.log(`-c ${CONNECTIONS}, ${BENCH_SECONDS} s measured after a warm-up, ${ROUNDS} rounds, a fresh server per case and round; the median round by requests/s:`);
  for (const c of cases) {
    const rs = runs.get(c.name)!;
    const m = [...rs].sort((a, b) => a.result.requests.average - b.result.requests.average)[Math.floor(rs.length / 2)]!;
    const r = m.result;
    const cpu = rs.map((x) => x.cpu).filter((x): x is number => x !== null);
    const cpuText = cpu.length ? `server CPU ${(median(cpu) / 1000).toFixed(2)} ms/response` : 'server CPU n/a';
    console.log(
      `${c.name.padEnd(36)} ${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p97.5 ${(r.latency as typeof r.latency & { p97_5: number }).p97_5} ms, p99 ${r.latency.p99} ms, ` +
        `non-2xx ${r.non2xx}, errors ${r.errors}; ${cpuText}; in-server elapsed mean ${m.elapsed.mean.toFixed(2)} ms, p99 ${m.elapsed.p99.toFixed(2)} ms ` +
        `(rounds: ${rs.map((x) => `${Math.round(x.result.requests.average)} req/s p99 ${x.result.latency.p99} ms`).join('; ')})`,
    );
  }
}
