import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import type net from 'node:net';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { EXIT_ADDRESS, startHttpProxy, startSocksProxy, startTlsTarget } from '../fixtures/proxies.js';
import { tempDir } from '../helpers/build.js';
import { listenUntilTestEnds } from '../helpers/listen.js';

/**
 * Issue 14's hygiene: proxy passwords never appear in a response or a log line (`proxy` echoes
 * `user:***`). `netdiag serve` runs as a user runs it, at LOG_LEVEL=trace, and everything it
 * writes to stdout and stderr is kept; the checks go through proxies that want the password,
 * one of which even hands our Proxy-Authorization on to the judge.
 */

const USER = 'alice';
const PASSWORD = 'Pw-Zq81-SECRET';
/** With the characters the input forms treat specially (':' and '@' inside, '%' for URLs). */
const ODD_PASSWORD = 's3:cr@t%Zq81X';

/** Every spelling of a password that must not leave: as is, percent-encoded, and inside Basic credentials. */
function spellings(password: string): string[] {
  return [password, encodeURIComponent(password), Buffer.from(`${USER}:${password}`).toString('base64'), Buffer.from(password).toString('base64')];
}

interface Served {
  base: string;
  token: string;
  /** stdout + stderr so far. */
  output: () => string;
  /** SIGTERM, then everything it wrote once it has exited (pino flushes on exit). */
  stop: () => Promise<string>;
}

async function serve(t: TestContext, env: Record<string, string>): Promise<Served> {
  const bin = new URL('../../bin/netdiag.js', import.meta.url).pathname;
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: `sqlite:${join(tempDir(t), 'passwords.db')}`,
      PORT: '0',
      HOST: '127.0.0.1',
      NETDIAG_DNS_SERVERS: '127.0.0.1:1',
      NETDIAG_ALLOW_TARGETS: '127.0.0.0/8',
      LOG_LEVEL: 'trace',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.after(() => child.kill('SIGKILL'));
  for (;;) {
    const port = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1];
    const token = /Try it:.*\b(nd_[0-9A-Za-z]+)/.exec(out)?.[1];
    if (port && token) {
      return {
        base: `http://127.0.0.1:${port}`,
        token,
        output: () => out,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
          return out;
        },
      };
    }
    if (child.exitCode !== null) throw new Error(`netdiag serve exited: ${out}`);
    await new Promise((resolve) => child.stdout.once('data', resolve));
  }
}

/**
 * An HTTP proxy that wants Basic credentials and, once given them, relays to our judge on
 * 127.0.0.1 with every header it received, Proxy-Authorization included.
 */
async function leakyProxy(t: TestContext): Promise<string> {
  const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    if (req.headers['proxy-authorization'] !== expected) return void res.writeHead(407, { 'proxy-authenticate': 'Basic realm="leaky"' }).end();
    const url = new URL(req.url ?? '/', 'http://invalid');
    if (url.hostname !== '127.0.0.1') return void res.writeHead(502).end();
    const out = http.request(
      { host: '127.0.0.1', port: Number(url.port), path: url.pathname, method: req.method, headers: req.headers, localAddress: EXIT_ADDRESS, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  server.on('connection', (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return `127.0.0.1:${await listenUntilTestEnds(t, server, sockets)}`;
}

test('no password in any answer (single, bulk, errors, 400s, 403s) nor in any log line', async (t) => {
  const tls = await startTlsTarget();
  const httpAuth = await startHttpProxy({ auth: { username: USER, password: PASSWORD } });
  const httpOdd = await startHttpProxy({ auth: { username: USER, password: ODD_PASSWORD } });
  const socksAuth = await startSocksProxy({ version: 5, auth: { username: USER, password: PASSWORD } });
  t.after(() => Promise.all([tls.close(), httpAuth.close(), httpOdd.close(), socksAuth.close()]));
  const leaky = await leakyProxy(t);
  const server = await serve(t, { NETDIAG_SSL_CHECK_TARGET: tls.address });

  const bodies: string[] = [];
  const post = async (path: string, json: unknown): Promise<{ status: number; body: { data?: unknown; message: string } }> => {
    const res = await fetch(server.base + path, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    });
    const text = await res.text();
    bodies.push(text);
    return { status: res.status, body: JSON.parse(text) as { data?: unknown; message: string } };
  };

  // Working checks in every input form, and what each shows as `proxy`.
  const forms: Array<[string, string]> = [
    [`${httpAuth.address}:${USER}:${PASSWORD}`, `${httpAuth.address}:${USER}:***`],
    [`${USER}:${PASSWORD}@${httpAuth.address}`, `${USER}:***@${httpAuth.address}`],
    [`http://${USER}:${PASSWORD}@${httpAuth.address}`, `http://${USER}:***@${httpAuth.address}`],
    [`${httpOdd.address}:${USER}:${ODD_PASSWORD}`, `${httpOdd.address}:${USER}:***`],
    [`${USER}:${ODD_PASSWORD}@${httpOdd.address}`, `${USER}:***@${httpOdd.address}`],
    [`https://${USER}:${encodeURIComponent(ODD_PASSWORD)}@${httpOdd.address}/`, `https://${USER}:***@${httpOdd.address}/`],
    [`socks5://${USER}:${PASSWORD}@${socksAuth.address}`, `socks5://${USER}:***@${socksAuth.address}`],
    [`${socksAuth.address}:${USER}:${PASSWORD}`, `${socksAuth.address}:${USER}:***`],
    [`${USER}:${PASSWORD}@${leaky}`, `${USER}:***@${leaky}`],
  ];
  for (const [proxy, shown] of forms) {
    const { status, body } = await post('/api/proxy/check', { proxy, check_speed: false });
    assert.equal(status, 200, proxy);
    const data = body.data as { proxy: string; status: string; error: string | null; proxy_headers?: string[] };
    assert.equal(data.status, 'working', `${shown}: ${data.error}`);
    assert.equal(data.proxy, shown);
    assert.match(body.message, new RegExp(`^${shown.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: working`));
  }
  const leakyResult = (await post('/api/proxy/check', { proxy: `${USER}:${PASSWORD}@${leaky}`, check_speed: false })).body.data as { anonymity_level: string; proxy_headers: string[] };
  assert.equal(leakyResult.anonymity_level, 'anonymous', 'Proxy-Authorization reached the judge: it announces a proxy');
  assert.deepEqual(leakyResult.proxy_headers, ['proxy-authorization'], 'named, never shown');

  // Refused credentials: the error says so without them.
  for (const proxy of [`${USER}:wrong-${PASSWORD}@${httpAuth.address}`, `socks5://${USER}:wrong-${PASSWORD}@${socksAuth.address}`]) {
    const data = (await post('/api/proxy/check', { proxy })).body.data as { status: string; error: string; proxy: string };
    assert.equal(data.status, 'failed');
    assert.match(data.error, /refused our credentials/);
    assert.match(data.proxy, /alice:\*\*\*@/);
  }

  // Bulk, with a working, a refused and a leaky entry.
  const bulk = await post('/api/proxy/check-bulk', { proxies: [forms[0]![0], `${USER}:nope${PASSWORD}@${httpAuth.address}`, forms[8]![0]], check_speed: false });
  assert.equal(bulk.status, 200);
  assert.deepEqual(
    (bulk.body.data as Array<{ proxy: string }>).map((r) => r.proxy),
    [forms[0]![1], `${USER}:***@${httpAuth.address}`, forms[8]![1]],
  );

  // Input the parser refuses still quotes it, without the password.
  const refused: Array<[string, RegExp]> = [
    [`http://${USER}:${PASSWORD}@127.0.0.1:8080/path`, /^proxy: "http:\/\/alice:\*\*\*@127\.0\.0\.1:8080\/path" has a path/],
    [`${USER}:${PASSWORD}@127.0.0.1`, /^proxy: "alice:\*\*\*@127\.0\.0\.1" has no port/],
    [`127.0.0.1:notaport:${USER}:${PASSWORD}`, /^proxy: "127\.0\.0\.1:notaport:alice:\*\*\*" /],
    [`${USER}:${PASSWORD} @127.0.0.1:8080`, /^proxy: "alice:\*\*\*@127\.0\.0\.1:8080" contains white space/],
    [`${USER}:${'x'.repeat(70)}${PASSWORD}@127.0.0.1`, /^proxy: "alice:\*\*\*@127\.0\.0\.1" has no port/],
    [`socks5://${USER}:${PASSWORD}%zz@127.0.0.1:1080`, /^proxy: password has a malformed %-escape/],
  ];
  for (const [proxy, message] of refused) {
    const { status, body } = await post('/api/proxy/check', { proxy });
    assert.equal(status, 400, proxy);
    assert.match(body.message, message);
  }
  // A bad entry of a bulk is its item, not a 400 (docs/api.md, "Bulk calls"; issue 24).
  const badBulk = await post('/api/proxy/check-bulk', { proxies: [forms[0]![0], `http://${USER}:${PASSWORD}@127.0.0.1:8080/x`], check_speed: false });
  assert.equal(badBulk.status, 200);
  const badItem = (badBulk.body.data as Array<{ proxy: string; error: string }>)[1]!;
  assert.equal(badItem.proxy, 'http://alice:***@127.0.0.1:8080/x');
  assert.match(badItem.error, /^proxies\[1\]: "http:\/\/alice:\*\*\*@127\.0\.0\.1:8080\/x" has a path/);

  // A forbidden proxy is refused before any packet is sent, naming its host only.
  const forbidden = await post('/api/proxy/check', { proxy: `${USER}:${PASSWORD}@10.0.0.1:8080` });
  assert.equal(forbidden.status, 403);

  const output = await server.stop();
  assert.match(output, /"msg":"request"/, 'the log was captured');
  for (const password of [PASSWORD, ODD_PASSWORD]) {
    for (const spelling of spellings(password)) {
      for (const [i, body] of bodies.entries()) assert.ok(!body.includes(spelling), `answer ${i} holds ${spelling}: ${body}`);
      assert.ok(!output.includes(spelling), `the log holds ${spelling}`);
    }
  }
});
