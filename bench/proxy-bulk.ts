import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startHttpProxy, startSocksProxy, startTlsTarget, type Running } from '../test/fixtures/proxies.js';
import { cpuMicros, startServer, type ChildServer } from './lib.js';
import { median } from './stats.js';

/**
 * Issue 8's figure: a bulk check of 100 working loopback proxies against one single check, in
 * the same run, and issue 15's: netdiag's own CPU per check (the server process's user + system
 * time during a bulk, from /proc, divided by the proxies checked). The server runs in its own
 * process; the proxies (HTTP transparent/anonymous/elite via proxy-chain, SOCKS5 and SOCKS4
 * fixtures, all exiting from 127.0.0.2) and the TLS target of the SSL check run here, so their
 * CPU is counted apart from netdiag's. Nothing leaves loopback.
 *
 * PROXY_DELAY_MS (default 0) delays every relayed request/tunnel by that much inside each proxy,
 * standing in for a distant proxy's round trips; at 0 everything is pure CPU on this machine.
 *
 * BASELINE_TREE=<checkout> also starts that checkout's server (its bench/servers/netdiag.ts, with
 * its own code; give it a node_modules) and measures it in the same run, round by round, alternating
 * with this tree's, against the same proxies: "before" and "after" on the same machine at the
 * same moment.
 *
 * ROUNDS (default 5) bulks per measurement; FLAGS=all or FLAGS=speed-off measures only that;
 * CPU_PROF_DIR=<dir> profiles this tree's server (bench/cpu-profile.mjs); DEBUG_TRIES=1 prints
 * each bulk result's protocol tries.
 *
 * Run: node --import tsx bench/proxy-bulk.ts
 *      PROXY_DELAY_MS=200 node --import tsx bench/proxy-bulk.ts
 *      git worktree add --detach ../before <commit> && ln -s "$PWD/node_modules" ../before/ &&
 *        BASELINE_TREE=../before PROXY_DELAY_MS=200 node --import tsx bench/proxy-bulk.ts
 */

const COUNT = 100;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const DELAY = Number(process.env.PROXY_DELAY_MS ?? 0);
const BASELINE_TREE = process.env.BASELINE_TREE;
const ONLY = process.env.FLAGS;

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

const serverEnv = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_SSL_CHECK_TARGET: tlsTarget.address };

interface Subject {
  label: string;
  server: ChildServer;
  singles: number[];
  bulks: number[];
  /** CPU ms of each bulk: netdiag's server process, and this process (the proxies and the TLS target). */
  serverCpu: number[];
  rigCpu: number[];
  /** Per checked proxy of every bulk: protocol tries made, and each step's own time (ms). */
  tries: number[];
  protocolMs: number[];
  sslMs: number[];
}

interface Checked {
  status: string;
  checks: { protocol: { time: number; tried: string[] }; ssl?: { time: number } };
}

const subjects: Subject[] = [];
const fresh = (label: string, server: ChildServer): Subject => ({ label, server, singles: [], bulks: [], serverCpu: [], rigCpu: [], tries: [], protocolMs: [], sslMs: [] });
if (BASELINE_TREE) {
  subjects.push(fresh('before', await startServer(resolve(BASELINE_TREE, 'bench/servers/netdiag.ts'), serverEnv)));
}
// CPU_PROF_DIR=<dir>: this tree's server writes a V8 CPU profile there when it stops (bench/cpu-profile.mjs).
const profile: Record<string, string> = process.env.CPU_PROF_DIR
  ? { NODE_OPTIONS: `--import ${new URL('./cpu-profile.mjs', import.meta.url).pathname}`, CPU_PROF_DIR: resolve(process.env.CPU_PROF_DIR) }
  : {};
subjects.push(fresh(BASELINE_TREE ? 'after' : 'netdiag', await startServer('./servers/netdiag.ts', { ...serverEnv, ...profile })));

async function post(server: ChildServer, path: string, body: unknown): Promise<{ ms: number; data: Array<{ status: string }> | { status: string } }> {
  const headers = { authorization: `Bearer ${server.info.token}`, 'content-type': 'application/json' };
  const started = performance.now();
  const res = await fetch(`${server.url}/api${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = (await res.json()) as { data: Array<{ status: string }> | { status: string } };
  if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status} ${JSON.stringify(json)}`);
  return { ms: performance.now() - started, data: json.data };
}

async function round(s: Subject, r: number, flags: Record<string, boolean>): Promise<void> {
  // One single check of each kind per round, so the median is not one kind's.
  for (let k = 0; k < 5; k++) {
    const one = await post(s.server, '/proxy/check', { proxy: proxies[(r * 5 + k) % COUNT]!.address, ...flags });
    if ((one.data as { status: string }).status !== 'working') throw new Error(`${s.label}: single check not working: ${JSON.stringify(one.data)}`);
    s.singles.push(one.ms);
  }
  const serverBefore = cpuMicros(s.server.child.pid);
  const rigBefore = process.cpuUsage();
  const bulk = await post(s.server, '/proxy/check-bulk', { proxies: proxies.map((p) => p.address), ...flags });
  const rig = process.cpuUsage(rigBefore);
  const serverAfter = cpuMicros(s.server.child.pid);
  if (serverBefore !== null && serverAfter !== null) s.serverCpu.push((serverAfter - serverBefore) / 1000);
  s.rigCpu.push((rig.user + rig.system) / 1000);
  const results = bulk.data as Checked[];
  const working = results.filter((d) => d.status === 'working').length;
  if (working !== COUNT) throw new Error(`${s.label}: bulk: only ${working} of ${COUNT} working`);
  for (const [i, d] of results.entries()) {
    if (process.env.DEBUG_TRIES) console.log(i % 5, d.checks.protocol.tried.join(','), d.checks.protocol.time);
    s.tries.push(d.checks.protocol.tried.length);
    s.protocolMs.push(d.checks.protocol.time);
    if (d.checks.ssl) s.sslMs.push(d.checks.ssl.time);
  }
  s.bulks.push(bulk.ms);
}

async function measure(flags: Record<string, boolean>, label: string): Promise<void> {
  for (const s of subjects) {
    Object.assign(s, fresh(s.label, s.server));
    // Warm-up: JIT, TLS contexts, the judge's own-address lookup.
    await post(s.server, '/proxy/check', { proxy: proxies[0]!.address, ...flags });
    await post(s.server, '/proxy/check-bulk', { proxies: proxies.slice(0, 10).map((p) => p.address), ...flags });
  }
  // Alternating, and in the other order every other round, so neither side always goes first.
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of r % 2 === 0 ? subjects : [...subjects].reverse()) await round(s, r, flags);
  }
  console.log(label);
  for (const s of subjects) {
    const one = median(s.singles);
    const bulk = median(s.bulks);
    const cpu = s.serverCpu.length ? median(s.serverCpu) : null;
    console.log(
      `  ${s.label.padEnd(8)} one check median ${one.toFixed(1)} ms (n=${s.singles.length}); bulk of ${COUNT} median ${bulk.toFixed(1)} ms (n=${s.bulks.length}, min ${Math.min(...s.bulks).toFixed(1)}, max ${Math.max(...s.bulks).toFixed(1)}); ratio ${(bulk / one).toFixed(2)}×`,
    );
    console.log(
      `  ${''.padEnd(8)} CPU during a bulk (median): netdiag ${cpu === null ? 'n/a' : cpu.toFixed(0)} ms = ${cpu === null ? 'n/a' : (cpu / COUNT).toFixed(2)} ms per check (rounds: ${s.serverCpu.map((c) => (c / COUNT).toFixed(2)).join(', ')}); proxies + TLS target ${median(s.rigCpu).toFixed(0)} ms`,
    );
    const tries = s.tries.reduce((a, b) => a + b, 0) / s.tries.length;
    console.log(
      `  ${''.padEnd(8)} in the bulks: ${tries.toFixed(2)} protocol tries per proxy; protocol step median ${median(s.protocolMs).toFixed(0)} ms (max ${Math.max(...s.protocolMs).toFixed(0)})${s.sslMs.length ? `, ssl step median ${median(s.sslMs).toFixed(0)} ms (max ${Math.max(...s.sslMs).toFixed(0)})` : ''}`,
    );
  }
}

try {
  console.log(`proxy delay ${DELAY} ms, ${ROUNDS} rounds${BASELINE_TREE ? `, before = ${BASELINE_TREE}` : ''}`);
  if (ONLY !== 'speed-off') await measure({}, 'all checks (ssl, anonymity, speed)');
  if (ONLY !== 'all') await measure({ check_speed: false }, 'check_speed: false');
} finally {
  await Promise.all(subjects.map((s) => s.server.stop()));
  await Promise.all([...proxies.map((p) => p.close()), tlsTarget.close()]);
}
