import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { Checker } from '../src/domain/checks/index.js';
import { createDialer } from '../src/infra/net/dialer.js';
import { createConnector } from '../src/infra/net/connector.js';
import { makeTestPki } from '../test/fixtures/tls-pki.js';
import { median } from './stats.js';

/**
 * Issue 27's figure for POST /http/check: its timings against `curl -w` on loopback, the two
 * clients taking turns against the same servers, which run in a child process (this file with
 * the argument `server`): an http:// and an https:// one (the test PKI's good certificate, which
 * names IP 127.0.0.1), each answering a 4 KiB body. The check runs in this process, as the API
 * runs it (the Checker over the dialer); curl in its own. Per timing, the median of each client
 * over the rounds and their difference.
 *
 * Aim: every timing within 2 ms of curl's (time_namelookup, time_connect, time_appconnect,
 * time_starttransfer, time_total).
 *
 * Run: node --import tsx bench/http-check.ts        (ROUNDS=40 per URL)
 */

const ROUNDS = Number(process.env.ROUNDS ?? 40);
const run = promisify(execFile);
const KEYS = ['dns', 'connect', 'tls', 'ttfb', 'total'] as const;
type Key = (typeof KEYS)[number];

async function serve(): Promise<void> {
  const pki = makeTestPki();
  const body = Buffer.alloc(4096, 'x');
  const answer = (_req: http.IncomingMessage, res: http.ServerResponse) => res.end(body);
  const plain = http.createServer(answer);
  const secure = https.createServer({ key: pki.servers.good.key, cert: pki.servers.good.chain }, answer);
  for (const s of [plain, secure]) await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s: net.Server) => (s.address() as net.AddressInfo).port;
  process.stdout.write(`${JSON.stringify({ http: port(plain), https: port(secure), ca: pki.caFile })}\n`);
  process.on('SIGTERM', () => {
    pki.remove();
    process.exit(0);
  });
}

async function curlTimings(url: string, ca: string): Promise<Record<Key, number | null>> {
  // The URL twice on new connections (Connection: close) without TLS session resumption: the
  // second transfer's figures, once curl has set up OpenSSL and cached the CA store, as the
  // check's are once its process has (its trust store is built once).
  const { stdout } = await run('curl', [
    '--noproxy', '*', '-s', '--no-sessionid', '-H', 'Connection: close', '--cacert', ca,
    '-w', '%{time_namelookup} %{time_connect} %{time_appconnect} %{time_starttransfer} %{time_total}\n',
    '-o', '/dev/null', url, '-o', '/dev/null', url,
  ]);
  const [dns, connect, tls, ttfb, total] = stdout.trim().split('\n').at(-1)!.split(' ').map((s) => Number(s) * 1000);
  return { dns: dns!, connect: connect!, tls: url.startsWith('https:') ? tls! : null, ttfb: ttfb!, total: total! };
}

async function main(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'server'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const info = await new Promise<{ http: number; https: number; ca: string }>((resolve) => {
    child.stdout!.setEncoding('utf8').once('data', (line: string) => resolve(JSON.parse(line)));
  });
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
  const checker = new Checker({ dialer, connector: createConnector(dialer), extraCaPem: readFileSync(info.ca, 'utf8') });
  const signal = new AbortController().signal;
  console.log(`ROUNDS=${ROUNDS} per URL, medians in ms (netdiag − curl)`);
  for (const url of [`http://127.0.0.1:${info.http}/`, `https://127.0.0.1:${info.https}/`]) {
    const ours: Record<Key, number[]> = { dns: [], connect: [], tls: [], ttfb: [], total: [] };
    const theirs: Record<Key, number[]> = { dns: [], connect: [], tls: [], ttfb: [], total: [] };
    // A few of each first, not counted: the first handshakes load code and the CA store.
    for (let round = -3; round < ROUNDS; round++) {
      // Each client back to back twice, the second counted (see curlTimings): a server process
      // woken from idle answers later than one that has just answered, on a loaded machine by
      // milliseconds, and both clients must meet it alike. The order alternates between rounds.
      const ours2 = async () => {
        await checker.http({ url }, signal);
        return checker.http({ url }, signal);
      };
      const [r, c] = round % 2 === 0 ? [await ours2(), await curlTimings(url, info.ca)] : await (async () => {
        const cc = await curlTimings(url, info.ca);
        return [await ours2(), cc] as const;
      })();
      if (r.error !== null) throw new Error(r.error);
      if (round < 0) continue;
      for (const k of KEYS) {
        const mine = k === 'total' ? r.timings.total : r.timings[k];
        if (mine !== null) ours[k].push(mine);
        if (c[k] !== null) theirs[k].push(c[k]);
      }
    }
    const cells = KEYS.filter((k) => ours[k].length > 0).map((k) => {
      const a = median(ours[k]);
      const b = median(theirs[k]);
      const d = a - b;
      return `${k} ${a.toFixed(2)} vs ${b.toFixed(2)} (${d >= 0 ? '+' : ''}${d.toFixed(2)}${Math.abs(d) <= 2 ? ' ✔' : ' ✘'})`;
    });
    console.log(`${url.split(':')[0]}: ${cells.join(', ')}`);
  }
  child.kill('SIGTERM');
}

if (process.argv[2] === 'server') await serve();
else await main();
