import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { IN_FLIGHT_LIMITS, PLANS } from '../../src/domain/accounts/plans.js';
import { IN_FLIGHT_RETRY_AFTER_S } from '../../src/http/call-steps.js';
import { createDialer, type ConnectFn } from '../../src/infra/net/dialer.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { startListener } from '../infra/net/fixtures/connect-spy.js';
import { eventually } from '../helpers/eventually.js';

/** Connects to this address never complete (no packet is sent: the socket is never told to connect). */
const SILENT_HOST = '127.0.0.2';
/** Long enough that a silent scan outlives the test; the test hangs up on it instead. */
const SILENT_TIMEOUT_S = 30;

let listener: Awaited<ReturnType<typeof startListener>>;
before(async () => {
  listener = await startListener('127.0.0.1');
});
after(() => listener.close());

/** Real connects to 127.0.0.1; connects to SILENT_HOST hang until their timeout or an abort. */
function silentOrReal(): { fn: ConnectFn; silent: net.Socket[] } {
  const silent: net.Socket[] = [];
  const fn: ConnectFn = (opts) => {
    if (opts.host === '127.0.0.1') return net.connect(opts);
    const s = new net.Socket();
    silent.push(s);
    return s;
  };
  return { fn, silent };
}

async function app(t: Parameters<typeof build>[0], plan: string) {
  const spy = silentOrReal();
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: spy.fn });
  const b = await build(t, { plan, deps: { dialer } });
  return { b, spy, dialer };
}

/** A scan that hangs (one silent port) until `controller` aborts it, i.e. the client hangs up. */
function hangingScan(b: Built, controller: AbortController, token = b.token): Promise<Response | null> {
  return b
    .api('/api/port/scan', { json: { host: SILENT_HOST, port: 80, timeout: SILENT_TIMEOUT_S }, signal: controller.signal, token })
    .catch(() => null);
}

const openScan = (b: Built, token = b.token) => b.api('/api/port/scan', { json: { host: '127.0.0.1', port: listener.port, timeout: 1 }, token });

for (const plan of ['free', 'basic'] as const) {
  test(`${plan}: ${IN_FLIGHT_LIMITS[plan]} probing requests at once; one more is a 429 with window "concurrent"`, async (t) => {
    const { b, spy, dialer } = await app(t, plan);
    // Scans whose answer is still open on the server: a slot comes back as its answer closes.
    let openScans = 0;
    b.app.server.on('request', (req, res) => {
      if (req.url !== '/api/port/scan') return;
      openScans++;
      res.once('close', () => openScans--);
    });
    const max = IN_FLIGHT_LIMITS[plan];
    const controller = new AbortController();
    const held = Array.from({ length: max }, () => hangingScan(b, controller));
    await eventually(() => spy.silent.length === max);
    assert.equal(spy.silent.length, max, 'every admitted scan is connecting');

    const refused = await openScan(b);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after'), String(IN_FLIGHT_RETRY_AFTER_S));
    const body = (await refused.json()) as { error: string; message: string; details: Record<string, unknown> };
    assert.equal(body.error, 'rate_limit_exceeded');
    assert.match(body.message, new RegExp(`${plan} plan: at most ${max} in flight`));
    assert.equal(body.details.limit, PLANS[plan].requests_per_minute);
    assert.equal(body.details.remaining, 0);
    assert.equal(body.details.window, 'concurrent');
    assert.match(String(body.details.reset_at), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    await assertMatchesOpenApi(b.app, 'POST', '/api/port/scan', 429, body);
    assert.equal(spy.silent.length, max, 'the refused request dialled nothing');
    // A 429 is not a call: the windows that admitted it take it back.
    const user = (await (await b.api('/api/user')).json()) as { data: { api_calls_used: number } };
    assert.equal(user.data.api_calls_used, max + 1, 'the held scans and this call; the refused request is not one');

    // Every probe route counts (the free plan's 10 a minute leave room for one of them); routes
    // that do not probe are not limited.
    const probeRoutes = [
      ['/api/port/scan-range', { host: '127.0.0.1', ports: [listener.port] }],
      ['/api/port/scan-common', { host: '127.0.0.1', preset: 'web' }],
      ['/api/proxy/check', { proxy: `127.0.0.1:${listener.port}` }],
      ['/api/proxy/check-bulk', { proxies: [`127.0.0.1:${listener.port}`] }],
      ['/api/ipv6/test', { target: '::1' }],
      ['/api/dns/whois', { domain: 'example.com' }],
    ] as const;
    for (const [path, json] of plan === 'free' ? probeRoutes.slice(0, 1) : probeRoutes) {
      const res = await b.api(path, { json });
      assert.equal(res.status, 429, path);
      assert.equal(((await res.json()) as { details: { window: string } }).details.window, 'concurrent', path);
    }
    assert.equal((await b.api('/api/user')).status, 200, 'not a probe');
    if (plan !== 'free') assert.equal((await b.api('/api/ipv6/validate', { json: { ipv6: '::1' } })).status, 200, 'not a probe');

    // Another account of the same plan has its own slots.
    const other = await b.accounts.createAccount({ email: 'other@example.com', name: 'Other', plan });
    assert.equal((await openScan(b, other.token)).status, 200);

    // The client hangs up: its slots come back as the server closes their answers, and the account may probe again.
    controller.abort();
    await Promise.all(held);
    await eventually(() => dialer.stats.active === 0);
    await eventually(() => openScans === 0, { what: 'the hung-up scans closed on the server' });
    assert.equal((await openScan(b)).status, 200, 'slots given back when the client hung up');
  });
}

test('slots are given back after every answer, errors included: many requests one after another all pass', async (t) => {
  // pro: its 60 requests a minute leave room for twice its 8 slots, three requests each.
  const { b } = await app(t, 'pro');
  for (let i = 0; i < 2 * IN_FLIGHT_LIMITS.pro; i++) {
    assert.equal((await openScan(b)).status, 200);
    // A target refused by the policy is a 403 from inside the handler: the slot still comes back.
    assert.equal((await b.api('/api/port/scan', { json: { host: '10.0.0.1', port: 80 } })).status, 403);
    // A body refused by validation never takes one.
    assert.equal((await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: 0 } })).status, 400);
  }
});
