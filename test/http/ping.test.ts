import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test, type TestContext } from 'node:test';
import { pingStatistics } from '../../src/domain/ping/index.js';
import { PING_MAX_TIMEOUT_S } from '../../src/domain/ping/defaults.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { DnsHostResolver } from '../../src/infra/net/resolver.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { finishedJob } from '../helpers/jobs.js';
import { closedPort, connectSpy, startListener } from '../infra/net/fixtures/connect-spy.js';
import { startDnsServer, type TestDnsServer } from '../infra/net/fixtures/dns-server.js';
import { blackholeUnavailable, runInBlackhole } from '../domain/ports/fixtures/blackhole.js';

/**
 * POST /api/ping/tcp over real HTTP: connects to loopback listeners and closed ports through
 * the dialer (every connect seen by a spy), a SYN-dropping port in a black-hole namespace, and
 * the target policy refusing before any connect. Every answer is checked against the document.
 */

interface Ping {
  host: string;
  ip: string | null;
  port: number;
  sent: number;
  received: number;
  loss_percent: number;
  min: number | null;
  avg: number | null;
  max: number | null;
  mdev: number | null;
  samples: Array<number | null>;
  outcomes: string[];
  error: string | null;
}
interface Ok<T> {
  success: true;
  data: T;
  message: string;
}
interface Err {
  success: false;
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

let listener: Awaited<ReturnType<typeof startListener>>;
let dns: TestDnsServer;
before(async () => {
  listener = await startListener('127.0.0.1');
  dns = await startDnsServer({ 'pingme.test': { A: ['127.0.0.1'], AAAA: [] }, 'gone.test': { nxdomain: true } });
});
after(async () => {
  await Promise.all([listener.close(), dns.close()]);
});

/** An app whose dialer allows loopback and shows every connect (loopback ones really connect). */
async function app(t: TestContext, allowTargets = ['127.0.0.0/8']) {
  const spy = connectSpy();
  const resolver = new DnsHostResolver([{ host: dns.host, port: dns.port }]);
  const dialer = createDialer({ allowTargets, dnsServers: [{ host: dns.host, port: dns.port }] }, { connectFn: spy.fn, resolver });
  const b = await build(t, { deps: { dialer } });
  return { b, spy, dialer };
}

async function post<T>(b: Built, json: unknown): Promise<{ status: number; body: T }> {
  const res = await b.api('/api/ping/tcp', { json });
  const body = (await res.json()) as T;
  await assertMatchesOpenApi(b.app, 'POST', '/api/ping/tcp', res.status, body);
  return { status: res.status, body };
}

async function ping(b: Built, json: unknown): Promise<Ok<Ping>> {
  const { status, body } = await post<Ok<Ping>>(b, json);
  assert.equal(status, 200, JSON.stringify(body));
  return body;
}

/** iputils ping's summary, written out again here: mean, and sqrt(mean of squares - mean squared). */
function expectedStats(samples: Array<number | null>) {
  const got = samples.filter((s): s is number => s !== null);
  const mean = got.reduce((a, b) => a + b, 0) / got.length;
  const r2 = (x: number) => Math.round(x * 100) / 100;
  return {
    min: Math.min(...got),
    max: Math.max(...got),
    avg: r2(mean),
    mdev: r2(Math.sqrt(got.reduce((a, b) => a + b * b, 0) / got.length - mean * mean)),
  };
}

describe('POST /api/ping/tcp', () => {
  test('an open port: every connect completes; min, avg, max and mdev as ping computes them', async (t) => {
    const { b, spy } = await app(t);
    // The listener answers at once: the longest timeout, so that no connect read late is a loss.
    const { data, message } = await ping(b, { host: 'pingme.test', port: listener.port, count: 5, timeout: PING_MAX_TIMEOUT_S });
    assert.equal(data.host, 'pingme.test');
    assert.equal(data.ip, '127.0.0.1');
    assert.equal(data.port, listener.port);
    assert.deepEqual([data.sent, data.received, data.loss_percent], [5, 5, 0]);
    assert.deepEqual(data.outcomes, ['connected', 'connected', 'connected', 'connected', 'connected']);
    assert.equal(data.samples.length, 5);
    assert.ok(data.samples.every((s) => typeof s === 'number' && s >= 0));
    assert.deepEqual({ min: data.min, max: data.max, avg: data.avg, mdev: data.mdev }, expectedStats(data.samples));
    assert.equal(data.error, null);
    assert.equal(message, `pingme.test (127.0.0.1) port ${listener.port}: 5 sent, 5 received, 0% loss`);
    // One connect per probe, each to the address that was checked.
    assert.deepEqual(
      spy.calls.map((c) => [c.host, c.port]),
      Array.from({ length: 5 }, () => ['127.0.0.1', listener.port]),
    );
  });

  test('a closed port: each refused connect is a lost probe (null), and there are no statistics', async (t) => {
    const { b, spy } = await app(t);
    const port = await closedPort('127.0.0.1');
    const { data } = await ping(b, { host: '127.0.0.1', port, count: 3 });
    assert.deepEqual(
      { sent: data.sent, received: data.received, loss_percent: data.loss_percent, min: data.min, avg: data.avg, max: data.max, mdev: data.mdev },
      { sent: 3, received: 0, loss_percent: 100, min: null, avg: null, max: null, mdev: null },
    );
    assert.deepEqual(data.samples, [null, null, null]);
    assert.deepEqual(data.outcomes, ['refused', 'refused', 'refused']);
    assert.equal(spy.calls.length, 3);
  });

  test('defaults: port 443, 4 connects', async (t) => {
    const { b, spy } = await app(t);
    const { data } = await ping(b, { host: '127.0.0.1' });
    assert.equal(data.port, 443);
    assert.equal(data.sent, 4);
    assert.equal(data.samples.length, 4);
    assert.deepEqual(spy.calls.map((c) => c.port), [443, 443, 443, 443]);
  });

  test('a host that does not resolve: a 200 saying so, nothing sent', async (t) => {
    const { b, spy } = await app(t);
    const { data, message } = await ping(b, { host: 'gone.test', port: 80 });
    assert.equal(data.ip, null);
    assert.deepEqual([data.sent, data.received, data.loss_percent, data.samples], [0, 0, 100, []]);
    assert.match(data.error ?? '', /gone\.test/);
    assert.match(message, /^gone\.test did not resolve: /);
    assert.equal(spy.calls.length, 0);
  });

  test('a forbidden target is a 403, and the dialer is never asked to connect', async (t) => {
    const { b, spy, dialer } = await app(t, []);
    for (const host of ['127.0.0.1', 'localhost', '10.1.2.3', '169.254.169.254', '[::1]', '0x7f.1', 'pingme.test']) {
      const { status, body } = await post<Err>(b, { host, port: 80 });
      assert.equal(status, 403, host);
      assert.equal(body.error, 'target_forbidden');
    }
    assert.equal(dialer.stats.connectAttempts, 0);
    assert.equal(spy.calls.length, 0);
  });

  test('bad input: a 400 naming the field and the rule, before any connect', async (t) => {
    const { b, spy } = await app(t);
    const cases: Array<[unknown, string, string]> = [
      [{ port: 80 }, 'host', 'host: is required'],
      [{ host: '127.0.0.1', count: 0 }, 'count', 'count: must be between 1 and 20'],
      [{ host: '127.0.0.1', count: 21 }, 'count', 'count: must be between 1 and 20'],
      [{ host: '127.0.0.1', count: '4' }, 'count', 'count: must be an integer'],
      [{ host: '127.0.0.1', timeout: 11 }, 'timeout', 'timeout: must be between 1 and 10'],
      [{ host: '127.0.0.1', timeout: 0.5 }, 'timeout', 'timeout: must be an integer'],
      [{ host: '127.0.0.1', port: 0 }, 'port', 'port: must be between 1 and 65535'],
    ];
    for (const [json, field, message] of cases) {
      const { status, body } = await post<Err>(b, json);
      assert.equal(status, 400, JSON.stringify(json));
      assert.equal(body.error, 'validation_error');
      assert.equal(body.details?.field, field);
      assert.equal(body.message, message);
    }
    assert.equal(spy.calls.length, 0);
  });

  test('as a job (Prefer: respond-async): the result is the synchronous data', async (t) => {
    const { b } = await app(t);
    const created = await b.api('/api/ping/tcp', { json: { host: '127.0.0.1', port: listener.port, count: 2, timeout: PING_MAX_TIMEOUT_S }, headers: { prefer: 'respond-async' } });
    assert.equal(created.status, 202);
    const { job } = await finishedJob<Ping>(b.api, ((await created.json()) as Ok<{ id: string }>).data.id);
    const result = job.result;
    assert.equal(job.status, 'succeeded');
    assert.deepEqual([result.sent, result.received, result.outcomes], [2, 2, ['connected', 'connected']]);
  });
});

test('pingStatistics: loss, and mdev as iputils computes it', () => {
  assert.deepEqual(pingStatistics([1, 2, 3, null]), { sent: 4, received: 3, loss_percent: 25, min: 1, avg: 2, max: 3, mdev: 0.82 });
  assert.deepEqual(pingStatistics([null, 5, null]), { sent: 3, received: 1, loss_percent: 66.67, min: 5, avg: 5, max: 5, mdev: 0 });
  assert.deepEqual(pingStatistics([]), { sent: 0, received: 0, loss_percent: 100, min: null, avg: null, max: null, mdev: null });
});

const NETNS_CHILD = fileURLToPath(new URL('../domain/ports/fixtures/api-in-netns.ts', import.meta.url));

test('a port that drops SYNs: every probe times out; a listener in the same namespace answers', { skip: blackholeUnavailable() ?? false }, async (t) => {
  const out = await runInBlackhole(
    NETNS_CHILD,
    [
      JSON.stringify({
        listen: [20001],
        requests: [
          { path: '/api/ping/tcp', body: { host: '127.0.0.1', port: 20002, count: 3, timeout: 1 } },
          { path: '/api/ping/tcp', body: { host: '127.0.0.1', port: 20001, count: 2, timeout: 1 } },
        ],
      }),
    ],
    { ports: [20002] },
  );
  assert.equal(out.code, 0, out.stderr);
  const [silent, open] = (JSON.parse(out.stdout) as { responses: Array<{ status: number; body: Ok<Ping> }> }).responses;
  const b = await build(t);
  for (const r of [silent!, open!]) {
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await assertMatchesOpenApi(b.app, 'POST', '/api/ping/tcp', 200, r.body);
  }
  assert.deepEqual(silent!.body.data.outcomes, ['timeout', 'timeout', 'timeout']);
  assert.deepEqual(silent!.body.data.samples, [null, null, null]);
  assert.equal(silent!.body.data.loss_percent, 100);
  assert.deepEqual(open!.body.data.outcomes, ['connected', 'connected']);
});
