import { spawn } from 'node:child_process';
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
 *
 * Run (as root, with nmap installed: apt-get install -y nmap):
 *   node --import tsx bench/port-scan.ts            (BENCH_ROUNDS=20, BENCH_FILTERED_ROUNDS=3)
 */

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const WARMUP_SCANS = 5;
const FILTERED_ROUNDS = Number(process.env.BENCH_FILTERED_ROUNDS ?? 3);
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

if (process.argv.includes('--filtered-inside')) {
  await filteredInside();
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
}
