import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { blackholeUnavailable, runInBlackhole } from '../test/domain/ports/fixtures/blackhole.js';
import { listeningPorts } from '../test/domain/ports/fixtures/quiet-ports.js';
import { startServer, type ChildServer } from './lib.js';
import { median } from './stats.js';

/**
 * Issue 7's figures, all on this machine's loopback:
 *
 * 1. POST /api/port/scan-range of ports 1-1000 on 127.0.0.1 against `nmap -sT -p 1-1000 -n -Pn
 *    127.0.0.1`, alternating, in the same run; both must find the same open ports.
 * 2. 1000 ports that drop SYNs at `timeout: 1`, inside a fresh network namespace whose loopback
 *    discards all TCP to 127.0.0.3 (see test/domain/ports/fixtures/blackhole.ts); nmap on the
 *    same ports for reference.
 * 3. Issue 27: every port ("1-65535") of 127.0.0.1 as a job (Prefer: respond-async, then its
 *    NDJSON stream to the job's last line) against `nmap -sT -p- -n -Pn 127.0.0.1`, alternating,
 *    in a fresh network namespace (nothing listens there but this script's listeners and the
 *    server: other programs' listeners come and go on the machine's loopback). Every port's
 *    state must agree; the server's RSS is sampled every 10 ms during each scan. Aim: ≤ 2× nmap's
 *    wall time, RSS growth < 50 MB.
 *
 * Run (as root, with nmap installed: apt-get install -y nmap):
 *   node --import tsx bench/port-scan.ts            (BENCH_ROUNDS=20, BENCH_FILTERED_ROUNDS=3, BENCH_FULL_ROUNDS=5)
 *   BENCH_ONLY=full node --import tsx bench/port-scan.ts     (only 3)
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const WARMUP_SCANS = 5;
const FILTERED_ROUNDS = Number(process.env.BENCH_FILTERED_ROUNDS ?? 3);
const FULL_ROUNDS = Number(process.env.BENCH_FULL_ROUNDS ?? 5);
/** Listeners of the full-range case, in its own namespace: low, registered and ephemeral ports, and the last one. */
const FULL_OPEN = [22, 80, 443, 5432, 8080, 40000, 65535];
/** Ports in 1-1000 this script listens on for the comparison, when they are free (root only: < 1024). */
const WANTED_OPEN = [21, 22, 25, 80, 443, 631, 993];
const BLACKHOLE_HOST = '127.0.0.3';
const ALL = Array.from({ length: 1000 }, (_, i) => i + 1);

interface Item {
  port: number;
  state: string;
}

async function scanRange(server: ChildServer, host: string, timeout: number): Promise<{ ms: number; items: Item[] }> {
  const started = performance.now();
  const res = await fetch(`${server.url}/api/port/scan-range`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.info.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ host, ports: ALL, timeout }),
  });
  const body = (await res.json()) as { data: Item[] };
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`scan-range answered ${res.status}: ${JSON.stringify(body)}`);
  return { ms, items: body.data };
}

/** nmap's open ports, its wall time as seen from here, and the `elapsed` it reports itself. */
function nmap(host: string, extra: string[] = []): Promise<{ ms: number; elapsedS: number; open: number[]; filtered: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('nmap', ['-sT', '-p', '1-1000', '-n', '-Pn', ...extra, host, '-oX', '-'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let xml = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (xml += c));
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = performance.now() - started;
      if (code !== 0) return reject(new Error(`nmap exited with ${code}`));
      const open = [...xml.matchAll(/<port protocol="tcp" portid="(\d+)"><state state="open"/g)].map((m) => Number(m[1]));
      const explicitFiltered = [...xml.matchAll(/<state state="filtered"/g)].length;
      const extra = /<extraports state="filtered" count="(\d+)"/.exec(xml);
      const elapsedS = Number(/elapsed="([\d.]+)"/.exec(xml)?.[1] ?? NaN);
      resolve({ ms, elapsedS, open, filtered: explicitFiltered + Number(extra?.[1] ?? 0) });
    });
  });
}

function stats(values: number[]): string {
  return `median ${median(values).toFixed(1)} ms, min ${Math.min(...values).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms (n=${values.length})`;
}

async function listen(ports: number[]): Promise<net.Server[]> {
  return Promise.all(
    ports.map(
      (port) =>
        new Promise<net.Server>((resolve, reject) => {
          const server = net.createServer((s) => s.on('error', () => undefined));
          server.once('error', reject);
          server.listen(port, '127.0.0.1', () => resolve(server));
        }),
    ),
  );
}

async function compareWithNmap(): Promise<void> {
  const busy = listeningPorts();
  const ours = process.getuid?.() === 0 ? WANTED_OPEN.filter((p) => !busy.has(p)) : [];
  const servers = await listen(ours);
  const server = await startServer('./servers/netdiag.ts', { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  try {
    // A server runs for days: measure it warm (JIT, SQLite statements), as nmap's native code always is.
    for (let i = 0; i < WARMUP_SCANS; i++) await scanRange(server, '127.0.0.1', 3);
    const api: number[] = [];
    const nm: number[] = [];
    const nmSelf: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const n = await nmap('127.0.0.1');
      const a = await scanRange(server, '127.0.0.1', 3);
      const apiOpen = a.items.filter((it) => it.state === 'open').map((it) => it.port);
      if (JSON.stringify(apiOpen) !== JSON.stringify(n.open)) {
        throw new Error(`different open ports: netdiag ${apiOpen.join(',')} vs nmap ${n.open.join(',')}`);
      }
      if (i === 0) console.log(`open ports in 1-1000 on 127.0.0.1 (both agree): ${apiOpen.join(', ') || 'none'}`);
      api.push(a.ms);
      nm.push(n.ms);
      nmSelf.push(n.elapsedS * 1000);
    }
    console.log(`netdiag POST /api/port/scan-range 1-1000 (HTTP round trip): ${stats(api)}`);
    console.log(`nmap -sT -p 1-1000 -n -Pn 127.0.0.1 (process wall time):   ${stats(nm)}`);
    console.log(`nmap's own "elapsed" (scan only, 10 ms resolution):       ${stats(nmSelf)}`);
  } finally {
    await server.stop();
    for (const s of servers) s.close();
  }
}

/** Runs inside the namespace: everything TCP to 127.0.0.3 is dropped there. */
async function filteredInside(): Promise<void> {
  const server = await startServer('./servers/netdiag.ts', { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  try {
    const times: number[] = [];
    for (let i = 0; i < FILTERED_ROUNDS; i++) {
      const { ms, items } = await scanRange(server, BLACKHOLE_HOST, 1);
      const filtered = items.filter((it) => it.state === 'filtered').length;
      if (filtered !== 1000) throw new Error(`expected 1000 filtered ports, got ${filtered}`);
      times.push(ms);
    }
    console.log(`netdiag 1000 filtered ports at timeout 1 (all 1000 filtered): ${stats(times)}`);
    // nmap's fastest template without retries; its defaults take minutes here (see the report).
    const flags = ['-T5', '--max-retries', '0'];
    const n = await nmap(BLACKHOLE_HOST, flags);
    console.log(`nmap -sT -p 1-1000 -n -Pn ${flags.join(' ')} ${BLACKHOLE_HOST}, same black hole: ${n.ms.toFixed(0)} ms wall, ${n.filtered} filtered`);
  } finally {
    await server.stop();
  }
}

/** nmap's state of every port of a -p- scan: those it lists, and the rest as its one `extraports` says. */
function nmapStates(xml: string): string[] {
  const extra = [...xml.matchAll(/<extraports state="(\w+)" count="(\d+)"/g)];
  if (extra.length > 1) throw new Error(`nmap reported ${extra.length} groups of unlisted ports`);
  const states = new Array<string>(65536).fill(extra[0]?.[1] ?? 'unlisted');
  for (const m of xml.matchAll(/<port protocol="tcp" portid="(\d+)"><state state="(\w+)"/g)) states[Number(m[1])] = m[2]!;
  return states;
}

function nmapFull(): Promise<{ ms: number; states: string[] }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('nmap', ['-sT', '-p-', '-n', '-Pn', '127.0.0.1', '-oX', '-'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let xml = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (xml += c));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve({ ms: performance.now() - started, states: nmapStates(xml) }) : reject(new Error(`nmap exited with ${code}`))));
  });
}

function rssOf(pid: number): number {
  const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** The full range as a job: ms from the POST to the stream's last line, the states by port, and the server's RSS growth. */
async function fullRangeJob(server: ChildServer): Promise<{ ms: number; states: string[]; rssGrowth: number }> {
  const pid = server.child.pid!;
  const before = rssOf(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 10);
  try {
    const auth = { authorization: `Bearer ${server.info.token}` };
    const started = performance.now();
    const res = await fetch(`${server.url}/api/port/scan-range`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ host: '127.0.0.1', ports: '1-65535', timeout: 1 }),
    });
    const { id } = ((await res.json()) as { data: { id: string } }).data;
    if (res.status !== 202) throw new Error(`the job was not accepted: ${res.status}`);
    const stream = await fetch(`${server.url}/api/jobs/${id}`, { headers: { ...auth, accept: 'application/x-ndjson' } });
    const text = await stream.text();
    const ms = performance.now() - started;
    const last = JSON.parse(text.slice(text.lastIndexOf('\n', text.length - 2) + 1)) as { status: string; result: Item[] };
    if (last.status !== 'succeeded' || last.result.length !== 65535) throw new Error(`job ${last.status} with ${last.result.length} items`);
    const states = new Array<string>(65536).fill('missing');
    last.result.forEach((it, i) => {
      if (it.port !== i + 1) throw new Error(`item ${i} is port ${it.port}`);
      states[it.port] = it.state;
    });
    peak = Math.max(peak, rssOf(pid));
    return { ms, states, rssGrowth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

/** Runs inside a namespace of its own: only this script's listeners and the server listen there. */
async function fullRangeInside(): Promise<void> {
  const servers = await listen(FULL_OPEN);
  const server = await startServer('./servers/netdiag.ts', { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  try {
    // Warm, as a server that has run for days: JIT, SQLite statements, the stream's path.
    for (let i = 0; i < WARMUP_SCANS; i++) await scanRange(server, '127.0.0.1', 3);
    await fullRangeJob(server);
    const api: number[] = [];
    const nm: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < FULL_ROUNDS; i++) {
      const n = await nmapFull();
      const a = await fullRangeJob(server);
      for (let port = 1; port <= 65535; port++) {
        if (a.states[port] !== n.states[port]) throw new Error(`port ${port}: netdiag ${a.states[port]}, nmap ${n.states[port]}`);
      }
      if (i === 0) {
        const open = a.states.flatMap((st, port) => (st === 'open' ? [port] : []));
        console.log(`all 65535 ports of 127.0.0.1 agree (open: ${open.join(', ')}; the rest closed)`);
      }
      api.push(a.ms);
      nm.push(n.ms);
      rss.push(a.rssGrowth / 1e6);
    }
    const ratios = api.map((a, i) => a / nm[i]!);
    console.log(`netdiag "1-65535" as a job (POST to the stream's last line): ${stats(api)}`);
    console.log(`nmap -sT -p- -n -Pn 127.0.0.1 (process wall time):        ${stats(nm)}`);
    console.log(`ratio per round: median ${median(ratios).toFixed(2)}×, min ${Math.min(...ratios).toFixed(2)}×, max ${Math.max(...ratios).toFixed(2)}×`);
    console.log(`server RSS growth during the scan: median ${median(rss).toFixed(1)} MB, max ${Math.max(...rss).toFixed(1)} MB (rounds: ${rss.map((r) => r.toFixed(1)).join(', ')})`);
  } finally {
    await server.stop();
  }
  try {
    await fullRangeFairness();
  } finally {
    for (const s of servers) s.close();
  }
}

/** B's one-port scan of an open port: ms for the round trip. */
async function onePort(server: ChildServer, token: string, port: number): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${server.url}/api/port/scan`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ host: '127.0.0.1', port, timeout: 3 }),
  });
  const body = (await res.json()) as { data: Item };
  if (res.status !== 200 || body.data.state !== 'open') throw new Error(`B's scan: ${res.status} ${JSON.stringify(body)}`);
  return performance.now() - started;
}

/** Account B (free) scans one open port alone, then while account A's full-range job runs: B must not wait for A's 65535 ports. */
async function fullRangeFairness(): Promise<void> {
  const server = await startServer('./servers/two-accounts.ts', { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  const { tokenA, tokenB } = server.info as { tokenA: string; tokenB: string };
  try {
    for (let i = 0; i < WARMUP_SCANS; i++) await onePort(server, tokenB, FULL_OPEN[1]!);
    const alone: number[] = [];
    for (let i = 0; i < 20; i++) alone.push(await onePort(server, tokenB, FULL_OPEN[1]!));
    const auth = { authorization: `Bearer ${tokenA}` };
    const res = await fetch(`${server.url}/api/port/scan-range`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ host: '127.0.0.1', ports: '1-65535', timeout: 1 }),
    });
    const { id } = ((await res.json()) as { data: { id: string } }).data;
    let done = false;
    const job = fetch(`${server.url}/api/jobs/${id}`, { headers: { ...auth, accept: 'application/x-ndjson' } })
      .then((r) => r.text())
      .finally(() => (done = true));
    const during: number[] = [];
    while (!done) during.push(await onePort(server, tokenB, FULL_OPEN[1]!));
    await job;
    console.log(`B's one-port scan alone: ${stats(alone)}`);
    console.log(`B's one-port scan during A's "1-65535" job: ${stats(during)}`);
  } finally {
    await server.stop();
  }
}

async function fullRange(): Promise<void> {
  const why = blackholeUnavailable();
  if (why) return console.log(`full-range figure skipped: ${why}`);
  const out = await runInBlackhole(fileURLToPath(import.meta.url), ['--full-range-inside'], {});
  process.stdout.write(out.stdout);
  if (out.code !== 0) throw new Error(`full-range run failed: ${out.stderr}`);
}

if (process.argv.includes('--filtered-inside')) {
  await filteredInside();
} else if (process.argv.includes('--full-range-inside')) {
  await fullRangeInside();
} else if (process.env.BENCH_ONLY === 'full') {
  await fullRange();
} else {
  console.log(`node ${process.version}, ${ROUNDS} rounds, alternating`);
  await compareWithNmap();
  const why = process.env.BENCH_SKIP_FILTERED ? 'BENCH_SKIP_FILTERED is set' : blackholeUnavailable();
  if (why) {
    console.log(`filtered-port figure skipped: ${why}`);
  } else {
    const out = await runInBlackhole(fileURLToPath(import.meta.url), ['--filtered-inside'], { host: BLACKHOLE_HOST });
    process.stdout.write(out.stdout);
    if (out.code !== 0) throw new Error(`filtered run failed: ${out.stderr}`);
  }
  await fullRange();
}
