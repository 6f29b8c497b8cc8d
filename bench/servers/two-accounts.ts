import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { openStore } from '../../src/infra/store/index.js';

/**
 * The real app over a fresh SQLite file with two accounts: A on BENCH_PLAN_A (enterprise) and
 * B on BENCH_PLAN_B (free); BENCH_A_ACCOUNTS (default 1) makes that many A accounts. The
 * per-minute limits are left out (`limiter: null`) so that a benchmark's rounds are not cut
 * short by them; the limit on work in flight is not a rate limit and stays on. Prints
 * `{"url", "tokenA", "tokensA" (every A's token, comma-separated), "tokenB"}` when it listens.
 */
const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-'));
const config = loadConfig({ ...process.env, DATABASE_URL: `sqlite:${join(dir, 'bench.db')}`, LOG_LEVEL: 'silent' });
const store = await openStore(config.databaseUrl);
const accounts = new AccountService(store);
const aAccounts = Number(process.env.BENCH_A_ACCOUNTS ?? 1);
const aList = [];
for (let i = 0; i < aAccounts; i++) {
  aList.push(await accounts.createAccount({ email: `a${i || ''}@example.com`, name: `A${i || ''}`, plan: process.env.BENCH_PLAN_A ?? 'enterprise' }));
}
const a = aList[0]!;
const b = await accounts.createAccount({ email: 'b@example.com', name: 'B', plan: process.env.BENCH_PLAN_B ?? 'free' });
const app = await composeApp({ config, store, limiter: null, logger: false });
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const port = typeof address === 'object' && address ? address.port : 0;
process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${port}`, tokenA: a.token, tokensA: aList.map((x) => x.token).join(','), tokenB: b.token }) + '\n');
process.once('SIGTERM', () =>
  void app.close().then(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }),
);
