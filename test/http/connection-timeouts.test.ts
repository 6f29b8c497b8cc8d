import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { CONNECTIONS_CHECK_INTERVAL_MS } from '../../src/http/plugins/connection.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { roomyLimiter } from '../helpers/roomy-limiter.js';
import { build } from '../helpers/build.js';
import { parseRaw, rawRequest, httpText } from '../helpers/raw-http.js';
import { hangingConnect } from '../infra/net/fixtures/connect-spy.js';
import { eventually } from '../helpers/eventually.js';

const HEADERS_TIMEOUT_S = 1;
const REQUEST_TIMEOUT_S = 2;
const ENV = { NETDIAG_HEADERS_TIMEOUT_S: String(HEADERS_TIMEOUT_S), NETDIAG_REQUEST_TIMEOUT_S: String(REQUEST_TIMEOUT_S) };
/**
 * How long the test waits for every held connection to be closed before it fails: a give-up, not
 * the figure (they close after their timeout plus Node's checking interval; the times are printed
 * below as diagnostics). Half of Node's own default headers timeout (60 s), and a
 * trickling client never stops on its own: closed by then is closed by our timeouts.
 */
const CLOSE_GIVE_UP_MS = 30_000;
const HELD = 200;


interface Held {
  kind: string;
  openedAt: number;
  /** Settles once what the connection sends first has been written. */
  sent: Promise<void>;
  /** When it closed; undefined while it is open. */
  closedAt: () => number | undefined;
  received: () => string;
  stop: () => void;
}

/** A connection that sends `head`, then whatever `behave` does, and records what it got and when it closed. */
function hold(port: number, kind: string, head: string, behave: (socket: net.Socket) => () => void): Held {
  const socket = net.connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let stop = (): void => {};
  let closedAt: number | undefined;
  const sent = new Promise<void>((resolve) =>
    socket.on('connect', () => {
      socket.write(head, () => resolve());
      stop = behave(socket);
    }),
  );
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.on('error', () => {});
  socket.on('close', () => {
    stop();
    closedAt = Date.now();
  });
  return { kind, openedAt: Date.now(), sent, closedAt: () => closedAt, received: () => Buffer.concat(chunks).toString('latin1'), stop: () => socket.destroy() };
}

test(`${HELD} connections that stall or trickle are each answered 408 and closed in time while a normal client is served`, async (t) => {
  const b = await build(t, { env: ENV, deps: { limiter: roomyLimiter() } });
  const port = Number(new URL(b.url).port);
  const body = JSON.stringify({ ip: '192.0.2.1' });
  const postHead = (token: string | null) =>
    `POST /api/ip/lookup HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length + 1000}\r\n` +
    (token ? `authorization: Bearer ${token}\r\n` : '') +
    '\r\n';
  const held: Held[] = [];
  for (let i = 0; i < HELD; i++) {
    const kind = ['body stalls', 'body trickles', 'no token, body trickles', 'headers stall', 'headers trickle'][i % 5]!;
    if (kind === 'body stalls') {
      held.push(hold(port, kind, postHead(b.token) + body.slice(0, 5), () => () => {}));
    } else if (kind.endsWith('body trickles')) {
      held.push(
        hold(port, kind, postHead(kind === 'body trickles' ? b.token : null), (s) => {
          const timer = setInterval(() => s.writable && s.write(' '), 100);
          return () => clearInterval(timer);
        }),
      );
    } else if (kind === 'headers stall') {
      held.push(hold(port, kind, 'GET /api/user HTTP/1.1\r\nhost: x\r\n', () => () => {}));
    } else {
      held.push(
        hold(port, kind, 'GET /api/user HTTP/1.1\r\n', (s) => {
          let n = 0;
          const timer = setInterval(() => s.writable && s.write(`x-${n++}: y\r\n`), 100);
          return () => clearInterval(timer);
        }),
      );
    }
  }
  t.after(() => held.forEach((h) => h.stop()));

  // While all of them are held (each has sent its start), a normal client is served.
  await Promise.all(held.map((h) => h.sent));
  const normal = await b.api('/api/user');
  assert.equal(normal.status, 200);
  const served = await rawRequest(port, httpText('POST', '/api/ip/lookup', { authorization: `Bearer ${b.token}` }, body));
  assert.equal(served.status, 200);

  await eventually(() => held.every((h) => h.closedAt() !== undefined), {
    timeoutMs: CLOSE_GIVE_UP_MS,
    intervalMs: 50,
    what: `every held connection closed (timeouts ${HEADERS_TIMEOUT_S} s and ${REQUEST_TIMEOUT_S} s, checked every ${CONNECTIONS_CHECK_INTERVAL_MS} ms)`,
  });
  for (const [i, h] of held.entries()) {
    const res = parseRaw(h.received());
    // Without a token the 401 goes out at once, before any body is read; the connection still closes.
    const expected = h.kind.startsWith('no token') ? [401, 'unauthorized'] : [408, 'request_timeout'];
    assert.equal(res.status, expected[0], `${h.kind} #${i}: ${h.received().slice(0, 200)}`);
    const json = JSON.parse(res.body) as { success: boolean; error: string; message: string };
    assert.equal(json.success, false);
    assert.equal(json.error, expected[1]);
    if (res.status === 408) {
      assert.match(json.message, /within 1 s .* within 2 s/);
      assert.equal(res.headers['connection'], 'close');
    }
  }
  // Each call that passed the token check is in the usage, answered or not: 40 stalled, 40
  // trickled, and the one served.
  const stats = (await (await b.api('/api/usage/stats')).json()) as { data: { today: { successful: number; failed: number }; by_endpoint: Record<string, number> } };
  t.diagnostic(JSON.stringify(stats.data));
  assert.equal(stats.data.by_endpoint['/ip/lookup'], 2 * (HELD / 5) + 1);
  const byKind = new Map<string, number[]>();
  for (const h of held) byKind.set(h.kind, [...(byKind.get(h.kind) ?? []), h.closedAt()! - h.openedAt]);
  for (const [kind, times] of byKind) t.diagnostic(`${kind}: ${times.length} closed after ${Math.min(...times)}–${Math.max(...times)} ms`);
});

test('a request whose answer takes longer than the request timeout is not cut short', async (t) => {
  // A connect that never completes: the scan waits its whole 4 s timeout, twice the request timeout.
  const { fn: connectFn } = hangingConnect();
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn });
  const b = await build(t, { env: ENV, deps: { dialer } });
  const res = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: 9, timeout: REQUEST_TIMEOUT_S * 2 } });
  assert.equal(res.status, 200);
  const json = (await res.json()) as { data: { state: string } };
  assert.equal(json.data.state, 'filtered');
});

test("errors Node's parser raises before routing are in the envelope", async (t) => {
  const b = await build(t);
  const port = Number(new URL(b.url).port);
  const cases: Array<[string, string, number, string]> = [
    ['no method', 'HELLO\r\n\r\n', 400, 'bad_request'],
    ['a bad method', 'G@T /api/user HTTP/1.1\r\nhost: x\r\n\r\n', 400, 'bad_request'],
    ['a control character in a header', 'GET /api/user HTTP/1.1\r\nhost: x\r\nx-a\x01: b\r\n\r\n', 400, 'bad_request'],
    ['a malformed chunk', 'POST /api/ip/lookup HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n\r\n', 400, 'bad_request'],
    ['Content-Length with chunked', 'POST /api/ip/lookup HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'bad_request'],
    ['a path that does not decode', 'GET /api/%zz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n', 400, 'bad_request'],
    ['headers over 16 KiB', `GET /api/user HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 431, 'headers_too_large'],
  ];
  for (const [name, text, status, code] of cases) {
    const res = await rawRequest(port, text);
    assert.equal(res.status, status, `${name}: ${res.raw.slice(0, 200)}`);
    const json = JSON.parse(res.body) as { success: boolean; error: string; message: string };
    assert.equal(json.success, false, name);
    assert.equal(json.error, code, name);
    assert.ok(json.message.length > 20, `${name}: ${json.message}`);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8', name);
    assert.equal(res.headers['x-content-type-options'], 'nosniff', name);
  }
});
