import { performance } from 'node:perf_hooks';
import { startHttpProxy, startSocksProxy, startTlsTarget, type Running } from '../test/fixtures/proxies.js';
import { cpuMicros, startServer } from './lib.js';
import { median } from './stats.js';

/**
 * Issue 8's figure: a bulk check of 100 working loopback proxies against one single check, in
 * the same run. The server runs in its own process; the proxies (HTTP transparent/anonymous/
 * elite via proxy-chain, SOCKS5 and SOCKS4 fixtures, all exiting from 127.0.0.2) and the TLS
 * target of the SSL check run here. Nothing leaves loopback.
 *
 * PROXY_DELAY_MS (default 0) delays every relayed request/tunnel by that much inside each proxy,
 * standing in for a distant proxy's round trips; at 0 everything is pure CPU on this machine.
 *
 * Run: node --import tsx bench/proxy-bulk.ts
 *      PROXY_DELAY_MS=100 node --import tsx bench/proxy-bulk.ts
 */

const COUNT = 100;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const DELAY = Number(process.env.PROXY_DELAY_MS ?? 0);

const tlsTarget = await startTlsTarget();
const proxies: Running[] = [];
for (let i = 0; i < COUNT; i++) {
  const delayMs = DELAY;
  switch (i % 5) {
    case 0:
      proxies.push(await startHttpProxy({ kind: 'transparent', delayMs }));
      break;
    case 1:
      proxies.push(await startHttpProxy({ kind: 'anonymous', delayMs }));
      break;
    case 2:
      proxies.push(await startHttpProxy({ kind: 'elite', delayMs }));
      break;
    case 3:
      proxies.push(await startSocksProxy({ version: 5, delayMs }));
      break;
    default:
      proxies.push(await startSocksProxy({ version: 4, delayMs }));
  }
}

const server = await startServer('./servers/netdiag.ts', {
  NETDIAG_ALLOW_TARGETS: '127.0.0.0/8',
  NETDIAG_SSL_CHECK_TARGET: tlsTarget.address,
});
const headers = { authorization: `Bearer ${server.info.token}`, 'content-type': 'application/json' };

async function post(path: string, body: unknown): Promise<{ ms: number; data: Array<{ status: string }> | { status: string } }> {
  const started = performance.now();
  const res = await fetch(`${server.url}/api${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = (await res.json()) as { data: Array<{ status: string }> | { status: string } };
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return { ms: performance.now() - started, data: json.data };
}

async function measure(flags: Record<string, boolean>, label: string): Promise<void> {
  // Warm-up: JIT, TLS contexts, the judge's own-address lookup.
  await post('/proxy/check', { proxy: proxies[0]!.address, ...flags });
  await post('/proxy/check-bulk', { proxies: proxies.slice(0, 10).map((p) => p.address), ...flags });
  const singles: number[] = [];
  const bulks: number[] = [];
  /** CPU ms of each bulk: netdiag's server process, and this process (the proxies and the TLS target). */
  const serverCpu: number[] = [];
  const rigCpu: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    // One single check of each kind per round, so the median is not one kind's.
    for (let k = 0; k < 5; k++) {
      const one = await post('/proxy/check', { proxy: proxies[(r * 5 + k) % COUNT]!.address, ...flags });
      if ((one.data as { status: string }).status !== 'working') throw new Error(`single check not working: ${JSON.stringify(one.data)}`);
      singles.push(one.ms);
    }
    const serverBefore = cpuMicros(server.child.pid);
    const rigBefore = process.cpuUsage();
    const bulk = await post('/proxy/check-bulk', { proxies: proxies.map((p) => p.address), ...flags });
    const rig = process.cpuUsage(rigBefore);
    const serverAfter = cpuMicros(server.child.pid);
    if (serverBefore !== null && serverAfter !== null) serverCpu.push((serverAfter - serverBefore) / 1000);
    rigCpu.push((rig.user + rig.system) / 1000);
    const working = (bulk.data as Array<{ status: string }>).filter((d) => d.status === 'working').length;
    if (working !== COUNT) throw new Error(`bulk: only ${working} of ${COUNT} working`);
    bulks.push(bulk.ms);
  }
  const s = median(singles);
  const b = median(bulks);
  console.log(
    `${label.padEnd(34)} one check median ${s.toFixed(1)} ms (n=${singles.length}); bulk of ${COUNT} median ${b.toFixed(1)} ms (n=${bulks.length}, min ${Math.min(...bulks).toFixed(1)}, max ${Math.max(...bulks).toFixed(1)}); ratio ${(b / s).toFixed(2)}×`,
  );
  console.log(
    `${''.padEnd(34)} CPU during a bulk (median): netdiag ${serverCpu.length ? median(serverCpu).toFixed(0) : 'n/a'} ms, proxies + TLS target ${median(rigCpu).toFixed(0)} ms`,
  );
}

try {
  console.log(`proxy delay ${DELAY} ms, ${ROUNDS} rounds`);
  await measure({}, 'all checks (ssl, anonymity, speed)');
  await measure({ check_speed: false }, 'check_speed: false');
} finally {
  await server.stop();
  await Promise.all([...proxies.map((p) => p.close()), tlsTarget.close()]);
}
