import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { composeApp } from '../src/compose-app.js';
import { loadConfig } from '../src/config.js';
import { AccountService } from '../src/domain/accounts/service.js';
import { createDialer } from '../src/infra/net/dialer.js';
import type { CheckedAddress } from '../src/domain/dialer.js';
import { PATH_DEFAULT_MAX_HOPS, PATH_DEFAULT_PROTOCOL, PATH_DEFAULT_UDP_PORT, TRACEROUTE_DEFAULT_QUERIES } from '../src/domain/path/index.js';
import { createPathTools, tracerouteArgs } from '../src/infra/path/index.js';
import { openSqliteStore } from '../src/infra/store/sqlite.js';
import { createLab, LAB_V4, labUnavailable } from '../test/helpers/netns.js';
import { median } from './stats.js';

/**
 * What a traceroute call costs over running `traceroute` itself, on the same three-hop path: a
 * lab of four network namespaces (test/helpers/netns.ts: client -> r1 -> r2 -> target), the
 * program run in the client's namespace both ways. Alternating, ROUNDS times each:
 *
 * - direct: `ip netns exec <client> traceroute -n -4 -I -q 3 -m 30 -w 3 -- 10.200.3.2`, timed
 *   from spawn to exit (the argument list netdiag gives it, docs/path-tools.md);
 * - the API: `POST /api/traceroute {"target": "10.200.3.2"}` to a server on 127.0.0.1 (SQLite,
 *   rate limits and usage recording on, as `netdiag serve` runs), timed from request to the
 *   whole answer: authentication, validation, the target policy, the process budget, the same
 *   program through the same `ip netns exec`, the parse, each hop's AS from the local data.
 *
 * - the service alone: PathTools.traceroute in this process, to tell the program's share from HTTP's.
 *
 * Aim: the API's median at most 1.3 x the program's; a three-hop trace answered in under 5 s.
 *
 * Run (root, iproute2, the Debian traceroute): node --import tsx bench/path-tools.ts   (ROUNDS=20)
 */

const ROUNDS = Number(process.env.ROUNDS ?? 20);
const TRACEROUTE = ['/usr/sbin/traceroute', '/usr/bin/traceroute'].find(existsSync);
const reason = labUnavailable() ?? (TRACEROUTE ? null : 'needs the Debian traceroute');
if (reason) {
  console.error(`bench/path-tools.ts: ${reason}`);
  process.exit(2);
}

// The argument list the service gives traceroute for {"target": "10.200.3.2"} (its defaults).
const ARGS = tracerouteArgs({ address: LAB_V4.target as CheckedAddress, family: 4, protocol: PATH_DEFAULT_PROTOCOL, port: PATH_DEFAULT_UDP_PORT, maxHops: PATH_DEFAULT_MAX_HOPS, queries: TRACEROUTE_DEFAULT_QUERIES });

const lab = await createLab();
const dir = mkdtempSync(join(tmpdir(), 'netdiag-bench-path-'));
try {
  const env = { DATABASE_URL: `sqlite:${join(dir, 'netdiag.db')}`, NETDIAG_ALLOW_TARGETS: '10.200.0.0/16', NETDIAG_DNS_SERVERS: '127.0.0.1:1' };
  const config = loadConfig(env);
  const store = await openSqliteStore(join(dir, 'netdiag.db'));
  const { token } = await new AccountService(store).createAccount({ email: 'bench@example.com', name: 'Bench', plan: 'enterprise' });
  const dialer = createDialer(config);
  const path = createPathTools({ dialer, runner: { spawn: lab.spawnIn('client') } });
  const app = await composeApp({ config, store, logger: false, dialer, path });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/traceroute`;

  const direct = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const started = performance.now();
      const child = spawn('ip', ['netns', 'exec', lab.ns.client, TRACEROUTE!, ...ARGS], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.on('error', reject);
      child.on('close', () => (out.includes(LAB_V4.target) ? resolve(performance.now() - started) : reject(new Error(`traceroute printed: ${out}`))));
    });
  const viaApi = async (): Promise<number> => {
    const started = performance.now();
    const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ target: LAB_V4.target }) });
    const body = (await res.json()) as { data?: { reached: boolean; hops: unknown[] } };
    if (res.status !== 200 || !body.data?.reached || body.data.hops.length !== 3) throw new Error(`the API answered ${res.status}: ${JSON.stringify(body)}`);
    return performance.now() - started;
  };

  // Warm both (the availability check, the first compile of the route).
  await direct();
  await viaApi();
  const viaApiTrivial = async (): Promise<number> => {
    const started = performance.now();
    const res = await fetch(url.replace('/traceroute', '/ipv6/expand'), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ ipv6: '2001:db8::1' }) });
    await res.arrayBuffer();
    return performance.now() - started;
  };
  const c: number[] = [];
  for (let i = 0; i < 20; i++) c.push(await viaApiTrivial());
  console.log(`  (an API call that runs no program, POST /api/ipv6/expand: median ${median(c).toFixed(1)} ms)`);
  // The service alone, in this process (no HTTP): where the API's extra time is spent.
  const viaService = async (): Promise<number> => {
    const started = performance.now();
    await path.traceroute(LAB_V4.target, {});
    return performance.now() - started;
  };
  const a: number[] = [];
  const b: number[] = [];
  const s: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    a.push(await direct());
    b.push(await viaApi());
    s.push(await viaService());
  }
  const ma = median(a);
  const mb = median(b);
  console.log(`three-hop ICMP traceroute, ${ROUNDS} rounds each, alternating`);
  console.log(`  traceroute itself: median ${ma.toFixed(1)} ms (min ${Math.min(...a).toFixed(1)}, max ${Math.max(...a).toFixed(1)})`);
  console.log(`  POST /api/traceroute: median ${mb.toFixed(1)} ms (min ${Math.min(...b).toFixed(1)}, max ${Math.max(...b).toFixed(1)})`);
  console.log(`  the service alone (no HTTP): median ${median(s).toFixed(1)} ms`);
  console.log(`  ratio ${(mb / ma).toFixed(2)}x (aim <= 1.3x); slowest API answer ${Math.max(...b).toFixed(0)} ms (aim < 5000 ms)`);
  await app.close();
  await store.close();
} finally {
  await lab.destroy();
  rmSync(dir, { recursive: true, force: true });
}
