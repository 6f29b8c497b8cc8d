import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import { CHECK_USER_AGENT, SPEED_DOWNLOAD_BYTES } from '../../src/domain/proxy/index.js';
import { closedProxyPort, EXIT_ADDRESS } from '../fixtures/proxies.js';
import { build, type Built } from '../helpers/build.js';
import { listenUntilTestEnds } from '../helpers/listen.js';

/**
 * Issue 14, "the judge cannot be fooled or milked": proxies on loopback that lie. A proxy sees
 * every nonce and every judge answer it carries; it may answer the judge request itself, rewrite
 * the judge's echo on its way back, or replay the nonce it was sent. None of that may earn it a
 * verdict on its own word, nor more than one echo, one download and one upload per check.
 *
 * Every proxy here is a node:http server on 127.0.0.1; the ones that relay connect to our judge
 * on 127.0.0.1 only (from 127.0.0.2, the fixtures' exit address), and refuse anything else.
 */

interface Answer {
  status: number;
  headers?: Record<string, string>;
  body: Buffer | string;
}

type Handler = (req: http.IncomingMessage, url: URL, body: Buffer) => Promise<Answer>;

function readBody(stream: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** The request's headers minus the ones meant for the proxy itself. */
function forwardable(req: http.IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i]!;
    if (!/^(proxy-|connection$|keep-alive$|content-length$)/i.test(name)) out[name] = req.rawHeaders[i + 1]!;
  }
  return out;
}

/** What a relaying proxy does: the same request to the judge, from the exit address. Loopback only. */
function toJudge(url: URL, method: string, headers: Record<string, string>, body?: Buffer): Promise<{ status: number; body: Buffer }> {
  if (url.hostname !== '127.0.0.1') return Promise.reject(new Error(`refusing to leave loopback for ${url.hostname}`));
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: Number(url.port), path: url.pathname, method, headers, localAddress: EXIT_ADDRESS, agent: false },
      (res) => void readBody(res).then((b) => resolve({ status: res.statusCode ?? 0, body: b }), reject),
    );
    req.on('error', reject);
    req.end(body);
  });
}

const relay = (req: http.IncomingMessage, url: URL, body: Buffer) => toJudge(url, req.method ?? 'GET', forwardable(req), body.length > 0 ? body : undefined);

/**
 * An HTTP proxy that handles every request with `handle`: absolute-form ones, and the ones sent
 * through a CONNECT "tunnel", which leads back into this same server instead of to the judge.
 */
async function hostileProxy(t: TestContext, handle: Handler): Promise<string> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://tunnel.invalid');
      const answer = await handle(req, url, await readBody(req));
      res.writeHead(answer.status, answer.headers).end(answer.body);
    })().catch(() => res.destroy());
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('connect', (_req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    server.emit('connection', socket);
  });
  return `127.0.0.1:${await listenUntilTestEnds(t, server, sockets)}`;
}

/** A request that came through the CONNECT "tunnel" (origin-form), not as an absolute-form request. */
const tunneled = (req: http.IncomingMessage): boolean => (req.url ?? '').startsWith('/');

const nonceIn = (url: URL): string => /\/judge\/([0-9a-f]+)/.exec(url.pathname)?.[1] ?? '';

/** 8,000 characters each, shaped after what makes backtracking regexes slow: long runs that almost match. */
const HURTFUL: readonly string[] = [
  ':'.repeat(8000),
  `${'0:'.repeat(4000)}!`,
  `${'1.'.repeat(4000)}!`,
  `${' '.repeat(7999)}!`,
  `${'a'.repeat(7999)}@`,
  '[::'.repeat(2666),
  `${'%'.repeat(7999)}x`,
];

/** The echo a lying proxy would like the checker to believe: someone else's address, clean headers, and a lot of padding. */
function forgedEcho(nonce: string, signature: string | undefined): string {
  const headers = [['Host', '127.0.0.1'], ['User-Agent', CHECK_USER_AGENT], ['Accept', 'application/json'], ...HURTFUL.map((v, i) => [`X-Pad-${i}`, v])];
  return JSON.stringify({ nonce, remote_address: '198.51.100.23', method: 'GET', headers, ...(signature === undefined ? {} : { signature }) });
}

interface Result {
  proxy: string;
  status: string;
  protocol: string | null;
  anonymity_level?: string | null;
  exit_ip: string | null;
  error: string | null;
  speed?: { download: string | null; upload: string | null } | null;
  checks: Record<string, { status: string; error: string | null }>;
}

/**
 * The app, with every judge answer it sends to a proxy's exit address recorded (our own direct
 * request to learn our address comes from 127.0.0.1 and is left out).
 */
async function app(t: TestContext): Promise<Built & { served: Array<{ path: string; status: number }> }> {
  const served: Array<{ path: string; status: number }> = [];
  const b = await build(t, {
    // The SSL check is off below; should it run, it would meet a closed loopback port.
    env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_SSL_CHECK_TARGET: await closedProxyPort() },
    extraRoutes: (a) =>
      a.addHook('onResponse', (request, reply, done) => {
        if (request.url.startsWith('/judge/') && request.ip === EXIT_ADDRESS) served.push({ path: request.url, status: reply.statusCode });
        done();
      }),
  });
  return { ...b, served };
}

async function check(b: Built, proxy: string, flags: Record<string, boolean> = {}): Promise<Result> {
  const res = await b.api('/api/proxy/check', { json: { proxy, check_ssl: false, ...flags } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { data: Result }).data;
}

/** What every lying proxy must get: no working status, no protocol, no exit address, no anonymity verdict. */
function assertNotBelieved(r: Result, why: RegExp): void {
  assert.equal(r.status, 'failed', `${r.status}: ${r.error}`);
  assert.equal(r.protocol, null);
  assert.equal(r.exit_ip, null, 'the address the proxy claimed is not reported');
  assert.equal(r.anonymity_level, null, 'neither elite nor anonymous on its own word');
  assert.match(r.error ?? '', why);
}

describe('a proxy that answers the judge request itself', () => {
  test('with a forged echo (someone else\'s address, clean headers, 56 KB of regex-hurting padding) and no signature', async (t) => {
    const b = await app(t);
    let asked = 0;
    const proxy = await hostileProxy(t, async (_req, url) => {
      asked++;
      return { status: 200, headers: { 'content-type': 'application/json' }, body: forgedEcho(nonceIn(url), undefined) };
    });
    assertNotBelieved(await check(b, proxy), /itself instead of relaying to the judge|not our judge/);
    assert.ok(asked >= 1, 'the proxy was asked');
    assert.deepEqual(b.served, [], 'the judge was never reached, and nothing it did not say was believed');
  });

  test('with a forged echo carrying a made-up signature, through the absolute-form request and through its CONNECT "tunnel"', async (t) => {
    const b = await app(t);
    const seen: string[] = [];
    const proxy = await hostileProxy(t, async (req, url) => {
      seen.push(req.url ?? '');
      return { status: 200, headers: { 'content-type': 'application/json' }, body: forgedEcho(nonceIn(url), 'ab'.repeat(32)) };
    });
    const r = await check(b, proxy);
    assertNotBelieved(r, /itself instead of relaying to the judge|not our judge/);
    assert.ok(seen.some((u) => u.startsWith('http://')) && seen.some((u) => u.startsWith('/judge/')), `asked both ways: ${seen.join(', ')}`);
  });

  test('with 64 KB response header values around its forged echo', async (t) => {
    const b = await app(t);
    const proxy = await hostileProxy(t, async (_req, url) => ({
      status: 200,
      headers: { 'content-type': 'application/json', 'x-hurt': `${'0:'.repeat(32 * 1024)}!`, 'x-hurt-2': ':'.repeat(64 * 1024) },
      body: forgedEcho(nonceIn(url), 'cd'.repeat(32)),
    }));
    assertNotBelieved(await check(b, proxy), /not HTTP|itself instead of relaying to the judge|not our judge/);
  });

  test("with a genuine echo of an earlier check, the nonce swapped: the judge's signature does not carry over", async (t) => {
    const b = await app(t);
    let stale: Record<string, unknown> | null = null;
    const proxy = await hostileProxy(t, async (req, url, body) => {
      if (!tunneled(req) && stale === null) {
        // Honest the first time: relay, and keep the judge's signed answer.
        const answer = await relay(req, new URL(req.url ?? ''), body);
        stale = JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;
        return { status: answer.status, headers: { 'content-type': 'application/json' }, body: answer.body };
      }
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...stale, nonce: nonceIn(url) }) };
    });
    const honest = await check(b, proxy, { check_speed: false });
    assert.equal(honest.status, 'working', honest.error ?? '');
    assert.equal(honest.anonymity_level, 'elite');
    assert.ok(stale, 'the proxy kept a genuine signed echo');
    assertNotBelieved(await check(b, proxy, { check_speed: false }), /itself instead of relaying to the judge|not our judge/);
  });
});

describe('a proxy that relays, then rewrites what the judge saw', () => {
  test('a transparent proxy that strips its X-Forwarded-For from the echo and claims another address is not believed', async (t) => {
    const b = await app(t);
    const proxy = await hostileProxy(t, async (req, url, body) => {
      if (tunneled(req)) return { status: 502, body: 'no tunnels here' };
      const headers = { ...forwardable(req), 'X-Forwarded-For': req.socket.remoteAddress ?? '' };
      const answer = await toJudge(new URL(req.url ?? ''), req.method ?? 'GET', headers, body.length > 0 ? body : undefined);
      const echo = JSON.parse(answer.body.toString('utf8')) as { headers: Array<[string, string]>; remote_address: string };
      const cleaned = { ...echo, remote_address: '198.51.100.23', headers: echo.headers.filter(([name]) => name !== 'X-Forwarded-For') };
      return { status: answer.status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(cleaned) };
    });
    assertNotBelieved(await check(b, proxy, { check_speed: false }), /itself instead of relaying to the judge|not our judge/);
    assert.equal(b.served.filter((s) => s.status === 200).length, 1, 'the judge did answer the relayed request, once');
  });

  test('headers the proxy adds on the way to the judge are judged from the signed echo, padding and all', async (t) => {
    const b = await app(t);
    const proxy = await hostileProxy(t, async (req, url, body) => {
      if (tunneled(req)) return { status: 502, body: 'no tunnels here' };
      // Under the judge's 16 KB header limit: 2 KB of each hurtful shape, in headers that announce a proxy.
      const added = Object.fromEntries(HURTFUL.map((v, i) => [i === 0 ? 'Via' : `X-Forwarded-${i}`, v.slice(0, 2000)]));
      const answer = await toJudge(new URL(req.url ?? ''), req.method ?? 'GET', { ...forwardable(req), ...added }, body.length > 0 ? body : undefined);
      return { status: answer.status, headers: { 'content-type': 'application/json' }, body: answer.body };
    });
    const r = await check(b, proxy, { check_speed: false });
    assert.equal(r.status, 'working', r.error ?? '');
    assert.equal(r.exit_ip, EXIT_ADDRESS);
    assert.equal(r.anonymity_level, 'anonymous', 'it announced itself, and did not carry our address');
  });
});

describe('a proxy that replays the nonce it was sent', () => {
  test('replays after relaying: every replay of the echo, the download and the upload is a 404; the check is undisturbed', async (t) => {
    const b = await app(t);
    const replays: Array<{ what: string; status: number }> = [];
    const proxy = await hostileProxy(t, async (req, url, body) => {
      if (tunneled(req)) return { status: 502, body: 'no tunnels here' };
      const target = new URL(req.url ?? '');
      const answer = await relay(req, target, body);
      for (let i = 0; i < 3; i++) {
        const again = await relay(req, target, body);
        replays.push({ what: target.pathname.split('/')[3] ?? 'echo', status: again.status });
      }
      return { status: answer.status, headers: { 'content-type': 'application/octet-stream' }, body: answer.body };
    });
    const r = await check(b, proxy);
    assert.equal(r.status, 'working', r.error ?? '');
    assert.equal(r.anonymity_level, 'elite');
    assert.equal(r.checks.speed?.status, 'ok', r.checks.speed?.error ?? '');
    assert.deepEqual(
      replays.map((x) => `${x.what} ${x.status}`),
      ['echo', 'download', 'upload'].flatMap((what) => Array.from({ length: 3 }, () => `${what} 404`)),
    );
    assert.equal(b.served.filter((s) => s.path.endsWith('/download') && s.status === 200).length, 1, 'one download served');
  });

  test('hammers the download while the check runs: the payload is served once in all, whoever asked first', async (t) => {
    const b = await app(t);
    const statuses: number[] = [];
    let bytes = 0;
    const proxy = await hostileProxy(t, async (req, url, body) => {
      if (tunneled(req)) return { status: 502, body: 'no tunnels here' };
      const target = new URL(req.url ?? '');
      if (!target.pathname.endsWith('/download')) return relay(req, target, body).then((a) => ({ ...a, headers: { 'content-type': 'application/json' } }));
      // Twenty pulls of its own alongside ours, all at once: what one nonce gave 333 MB for before.
      const all = await Promise.all([relay(req, target, body), ...Array.from({ length: 20 }, () => relay(req, target, body))]);
      for (const a of all) {
        statuses.push(a.status);
        if (a.status === 200) bytes += a.body.length;
      }
      return { status: all[0]!.status, headers: { 'content-type': 'application/octet-stream' }, body: all[0]!.body };
    });
    const r = await check(b, proxy);
    assert.equal(r.status, 'working', r.error ?? '');
    assert.equal(statuses.length, 21);
    assert.equal(statuses.filter((s) => s === 200).length, 1, `statuses: ${statuses.join(' ')}`);
    assert.equal(statuses.filter((s) => s === 404).length, 20);
    assert.equal(bytes, SPEED_DOWNLOAD_BYTES, 'one payload in all');
    assert.equal(b.served.filter((s) => s.path.endsWith('/download') && s.status === 200).length, 1);
  });

  test('steals the echo before relaying: its own request gets the one echo, ours a 404, and the proxy is not called working', async (t) => {
    const b = await app(t);
    const seen: string[] = [];
    const statuses: number[] = [];
    const proxy = await hostileProxy(t, async (req, url, body) => {
      if (tunneled(req)) return { status: 502, body: 'no tunnels here' };
      const target = new URL(req.url ?? '');
      seen.push(target.href);
      const stolen = await toJudge(target, 'GET', { host: target.host, accept: 'application/json' });
      const ours = await relay(req, target, body);
      statuses.push(stolen.status, ours.status);
      return { status: ours.status, body: ours.body };
    });
    const r = await check(b, proxy, { check_speed: false });
    assert.deepEqual(statuses, [200, 404], 'the first request with the nonce had the echo; ours, second, a 404');
    assert.equal(r.status, 'failed');
    assert.equal(r.protocol, null);
    assert.equal(r.anonymity_level, null);
    // Afterwards, everything it was sent is dead.
    for (const href of seen) assert.equal((await fetch(href)).status, 404, href);
  });
});
