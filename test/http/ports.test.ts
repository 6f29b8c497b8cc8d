import assert from 'node:assert/strict';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test, type TestContext } from 'node:test';
import { PRESETS, PRESET_NAMES, serviceName } from '../../src/domain/ports/index.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { DnsHostResolver } from '../../src/infra/net/resolver.js';
import { build, type Built } from '../helpers/build.js';
import { finishedJob } from '../helpers/jobs.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { closedPort, connectSpy, hangingConnect, startListener } from '../infra/net/fixtures/connect-spy.js';
import { eventually } from '../helpers/eventually.js';
import { startDnsServer, type TestDnsServer } from '../infra/net/fixtures/dns-server.js';
import { blackholeUnavailable, runInBlackhole } from '../domain/ports/fixtures/blackhole.js';
import { openFds, quietLowPorts } from '../domain/ports/fixtures/quiet-ports.js';

// own process: counts the process's open file descriptors (scripts/test-tree.mjs).

const LOOPBACK_ENV = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8,::1/128' };

interface Item {
  host: string;
  ip: string | null;
  port: number;
  open: boolean;
  state: 'open' | 'closed' | 'filtered' | 'unresolved';
  service: string | null;
  response_time: number | null;
  queued_ms: number | null;
  reason: string;
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

async function post<T>(b: Built, path: string, json: unknown): Promise<{ status: number; body: T }> {
  const res = await b.api(path, { json });
  const body = (await res.json()) as T;
  await assertMatchesOpenApi(b.app, 'POST', path, res.status, body);
  return { status: res.status, body };
}

let listeners: Array<Awaited<ReturnType<typeof startListener>>>;
let dns: TestDnsServer;

before(async () => {
  listeners = await Promise.all([startListener('127.0.0.1'), startListener('127.0.0.1'), startListener('127.0.0.1')]);
  dns = await startDnsServer({ 'scanme.test': { A: ['127.0.0.1'], AAAA: [] }, 'gone.test': { nxdomain: true } });
});
after(async () => {
  await Promise.all([dns.close(), ...listeners.map((l) => l.close())]);
});

const openPorts = () => listeners.map((l) => l.port).sort((a, b) => a - b);

describe('POST /api/port/scan-range', () => {
  test('loopback listeners are exactly the open ports, the rest closed; sorted, duplicates removed', async (t) => {
    const b = await build(t, { env: LOOPBACK_ENV });
    const quiet = quietLowPorts(50);
    const ports = [...quiet, ...openPorts(), ...quiet.slice(0, 5), openPorts()[0]!].reverse();
    const { status, body } = await post<Ok<Item[]>>(b, '/api/port/scan-range', { host: '127.0.0.1', ports, timeout: 2 });
    assert.equal(status, 200);
    assert.deepEqual(body.data.map((i) => i.port), [...new Set(ports)].sort((x, y) => x - y));
    assert.deepEqual(body.data.filter((i) => i.open).map((i) => i.port), openPorts());
    for (const item of body.data) {
      const open = openPorts().includes(item.port);
      assert.equal(item.state, open ? 'open' : 'closed');
      assert.equal(item.host, '127.0.0.1');
      assert.equal(item.ip, '127.0.0.1');
      assert.equal(typeof item.response_time, 'number');
    }
    assert.ok(body.data.every((i) => i.service === serviceName(i.port)));
    assert.ok(body.data.some((i) => i.service !== null), 'well-known ports among them are named');
    assert.equal(body.message, `53 ports of 127.0.0.1 (127.0.0.1): 3 open, 50 closed, 0 filtered`);
  });

  test('a name is resolved once; every item names the address scanned', async (t) => {
    const b = await build(t, { env: { ...LOOPBACK_ENV, NETDIAG_DNS_SERVERS: `${dns.host}:${dns.port}` } });
    const before = dns.queries.length;
    const { status, body } = await post<Ok<Item[]>>(b, '/api/port/scan-range', { host: 'scanme.test', ports: [...openPorts(), 1, 2] });
    assert.equal(status, 200);
    assert.deepEqual(dns.queries.slice(before).filter((q) => q.startsWith('A ')), ['A scanme.test']);
    assert.ok(body.data.every((i) => i.host === 'scanme.test' && i.ip === '127.0.0.1'));
    assert.deepEqual(body.data.filter((i) => i.open).map((i) => i.port), openPorts());
    assert.match(body.message, /^5 ports of scanme\.test \(127\.0\.0\.1\): 3 open, 2 closed, 0 filtered$/);
  });

  test('a name that does not exist is a 200 that says so', async (t) => {
    const b = await build(t, { env: { ...LOOPBACK_ENV, NETDIAG_DNS_SERVERS: `${dns.host}:${dns.port}` } });
    const { status, body } = await post<Ok<Item[]>>(b, '/api/port/scan-range', { host: 'gone.test', ports: [443, 80] });
    assert.equal(status, 200);
    assert.deepEqual(body.data.map((i) => [i.port, i.ip, i.open, i.state, i.response_time]), [
      [80, null, false, 'unresolved', null],
      [443, null, false, 'unresolved', null],
    ]);
    assert.match(body.message, /gone\.test did not resolve: gone\.test does not exist/);
  });
});

describe('POST /api/port/scan', () => {
  test('one port: open with host, ip and response time; a free port closed', async (t) => {
    const b = await build(t, { env: LOOPBACK_ENV });
    const open = await post<Ok<Item>>(b, '/api/port/scan', { host: '127.0.0.1', port: listeners[0]!.port });
    assert.equal(open.status, 200);
    assert.ok(typeof open.body.data.queued_ms === 'number', 'the wait for a connection slot, apart from response_time');
    assert.deepEqual({ ...open.body.data, response_time: 0, queued_ms: 0 }, {
      host: '127.0.0.1', ip: '127.0.0.1', port: listeners[0]!.port, open: true, state: 'open', service: null, response_time: 0, queued_ms: 0, reason: 'connected', error: null,
    });
    assert.equal(open.body.message, `port ${listeners[0]!.port} of 127.0.0.1 (127.0.0.1): open`);

    const free = await closedPort('::1');
    const closed = await post<Ok<Item>>(b, '/api/port/scan', { host: '::1', port: free, timeout: 1 });
    assert.equal(closed.status, 200);
    assert.equal(closed.body.data.state, 'closed');
    assert.equal(closed.body.data.open, false);
    assert.equal(closed.body.data.ip, '::1');
  });
});

test('POST /api/port/scan-common', async (t) => {
  const b = await build(t, { env: LOOPBACK_ENV });
  for (const preset of PRESET_NAMES) {
    await t.test(`${preset}: one item per preset port, in order`, async () => {
      const { status, body } = await post<Ok<Item[]>>(b, '/api/port/scan-common', { host: '127.0.0.1', preset, timeout: 1 });
      assert.equal(status, 200);
      assert.deepEqual(body.data.map((i) => i.port), [...PRESETS[preset]]);
      // Other programs on this machine may listen on preset ports; what is not open was refused.
      assert.ok(body.data.every((i) => i.state !== 'filtered' && i.open === (i.state === 'open')));
      assert.match(body.message, new RegExp(`^${preset}: ${PRESETS[preset].length} ports of 127\\.0\\.0\\.1 \\(127\\.0\\.0\\.1\\)`));
    });
  }
});

describe('a host that does not resolve: a 200 whose items are unresolved, naming the DNS answer; nothing is dialled', () => {
  let silentDns: TestDnsServer;
  before(async () => {
    silentDns = await startDnsServer({ 'slow.test': { silent: true } });
  });
  after(() => silentDns.close());

  /**
   * An app whose resolver asks `server` and whose every connect is seen: briefly the silent one,
   * patiently one that answers (however busy the machine, its answer is not a TIMEOUT).
   */
  async function appAsking(t: TestContext, server: TestDnsServer) {
    const spy = connectSpy();
    const patience = server === silentDns ? { timeoutMs: 100, tries: 1, deadlineMs: 300 } : { timeoutMs: 5_000, tries: 1, deadlineMs: 10_000 };
    const resolver = new DnsHostResolver([{ host: server.host, port: server.port }], patience);
    const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: server.host, port: server.port }] }, { connectFn: spy.fn, resolver });
    const b = await build(t, { deps: { dialer } });
    return { b, spy, dialer };
  }

  const calls = (host: string) =>
    [
      ['/api/port/scan', { host, port: 443 }],
      ['/api/port/scan-range', { host, ports: '80,443' }],
      ['/api/port/scan-common', { host, preset: 'web' }],
    ] as const;

  /** One port's item, or each item of a range: unresolved, with the DNS answer and no packet's figures. */
  function assertUnresolved(data: Item | Item[], host: string, error: string, path: string): void {
    const items = Array.isArray(data) ? data : [data];
    if (path === '/api/port/scan') assert.ok(!Array.isArray(data), '/port/scan answers one item');
    if (path === '/api/port/scan-range') assert.deepEqual(items.map((i) => i.port), [80, 443]);
    if (path === '/api/port/scan-common') assert.deepEqual(items.map((i) => i.port), [...PRESETS.web]);
    for (const i of items) {
      assert.deepEqual(
        { host: i.host, ip: i.ip, open: i.open, state: i.state, error: i.error, response_time: i.response_time, queued_ms: i.queued_ms },
        { host, ip: null, open: false, state: 'unresolved', error, response_time: null, queued_ms: null },
        path,
      );
      assert.equal(i.service, serviceName(i.port));
      assert.match(i.reason, new RegExp(host.replace('.', '\\.')));
    }
  }


  for (const [name, host, error] of [
    ['NXDOMAIN', 'gone.test', 'NXDOMAIN'],
    ['a silent DNS server', 'slow.test', 'TIMEOUT'],
  ] as const) {
    test(`${name}: synchronous and as a job`, async (t) => {
      const { b, spy, dialer } = await appAsking(t, error === 'NXDOMAIN' ? dns : silentDns);
      for (const [path, json] of calls(host)) {
        const { status, body } = await post<Ok<Item | Item[]>>(b, path, json);
        assert.equal(status, 200, path);
        assertUnresolved(body.data, host, error, path);
        assert.match(body.message, new RegExp(`${host.replace('.', '\\.')} did not resolve`));

        const created = await b.api(path, { json, headers: { prefer: 'respond-async' } });
        assert.equal(created.status, 202, path);
        const { job } = await finishedJob(b.api, ((await created.json()) as Ok<{ id: string }>).data.id);
        assert.equal(job.status, 'succeeded', path);
        assertUnresolved(job.result as Item | Item[], host, error, path);
      }
      assert.equal(spy.calls.length, 0, 'no packet was sent to any port');
      assert.equal(dialer.stats.connectAttempts, 0);
    });
  }
});

describe('bad input is a 400 naming the field and the rule; nothing is dialled', () => {
  const range = (extra: Record<string, unknown>) => ({ path: '/api/port/scan-range', json: { host: '127.0.0.1', ports: [80], ...extra } });
  const single = (extra: Record<string, unknown>) => ({ path: '/api/port/scan', json: { host: '127.0.0.1', port: 80, ...extra } });
  const common = (extra: Record<string, unknown>) => ({ path: '/api/port/scan-common', json: { host: '127.0.0.1', preset: 'web', ...extra } });
  const cases: Array<[string, { path: string; json: unknown }, string, string]> = [
    ['no ports', range({ ports: [] }), 'ports', 'ports: at least 1 entry'],
    ['1001 ports', range({ ports: Array.from({ length: 1001 }, (_, i) => i + 1) }), 'ports', 'ports: at most 1000 entries; a job (Prefer: respond-async) takes up to 65535'],
    ['port 0 in ports', range({ ports: [80, 0] }), 'ports[1]', 'ports[1]: must be between 1 and 65535'],
    ['port 65536 in ports', range({ ports: [65536] }), 'ports[0]', 'ports[0]: must be between 1 and 65535'],
    ['a string port in ports', range({ ports: ['80'] }), 'ports[0]', 'ports[0]: must be an integer'],
    ['a fractional port in ports', range({ ports: [80.5] }), 'ports[0]', 'ports[0]: must be an integer'],
    ['ports not an array', range({ ports: 80 }), 'ports', 'ports: must be an array or a string'],
    ['range timeout 0', range({ timeout: 0 }), 'timeout', 'timeout: must be between 1 and 30'],
    ['range timeout 31', range({ timeout: 31 }), 'timeout', 'timeout: must be between 1 and 30'],
    ['range timeout "3"', range({ timeout: '3' }), 'timeout', 'timeout: must be an integer'],
    ['no host', { path: '/api/port/scan-range', json: { ports: [80] } }, 'host', 'host: is required'],
    ['empty host', range({ host: '' }), 'host', 'host: must not be empty'],
    ['host with a space', range({ host: 'exa mple.com' }), 'host', 'host: "exa mple.com" is not a valid internationalised domain name'],
    ['host not a string', range({ host: 2130706433 }), 'host', 'host: must be a string'],
    ['port 0', single({ port: 0 }), 'port', 'port: must be between 1 and 65535'],
    ['port 65536', single({ port: 65536 }), 'port', 'port: must be between 1 and 65535'],
    ['port "80"', single({ port: '80' }), 'port', 'port: must be an integer'],
    ['no port', { path: '/api/port/scan', json: { host: '127.0.0.1' } }, 'port', 'port: is required'],
    ['scan timeout 31', single({ timeout: 31 }), 'timeout', 'timeout: must be between 1 and 30'],
    ['unknown preset', common({ preset: 'all' }), 'preset', 'preset: must be one of top100, web, mail, database'],
    ['no preset', { path: '/api/port/scan-common', json: { host: '127.0.0.1' } }, 'preset', 'preset: is required'],
    ['common timeout 0', common({ timeout: 0 }), 'timeout', 'timeout: must be between 1 and 30'],
    ['a body that is not an object', { path: '/api/port/scan-range', json: [80] }, 'body', 'body: must be a JSON object'],
  ];
  // One app for all cases (building one is the slow part); each case is its own subtest.
  test('each case', async (t) => {
    const spy = connectSpy();
    const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: spy.fn });
    const b = await build(t, { deps: { dialer } });
    for (const [name, req, field, message] of cases) {
      await t.test(name, async () => {
        const { status, body } = await post<Err>(b, req.path, req.json);
        assert.equal(status, 400);
        assert.equal(body.error, 'validation_error');
        assert.equal(body.message, message);
        assert.equal(body.details?.field, field);
      });
    }
    assert.equal(dialer.stats.connectAttempts, 0);
    assert.equal(spy.calls.length, 0);
  });
});

test('a forbidden host is a 403 before any connect', async (t) => {
  const spy = connectSpy();
  // No NETDIAG_ALLOW_TARGETS: the production policy.
  const dialer = createDialer({ allowTargets: [], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: spy.fn });
  const b = await build(t, { deps: { dialer } });
  for (const host of ['127.0.0.1', 'localhost', '10.1.2.3', '192.168.0.1', '169.254.169.254', '[::1]', '0x7f.1', '::ffff:127.0.0.1']) {
    await t.test(host, async () => {
      for (const [path, json] of [
        ['/api/port/scan', { host, port: 80 }],
        ['/api/port/scan-range', { host, ports: [22, 80, 443] }],
        ['/api/port/scan-common', { host, preset: 'top100' }],
      ] as const) {
        const { status, body } = await post<Err>(b, path, json);
        assert.equal(status, 403, path);
        assert.equal(body.error, 'target_forbidden');
        assert.match(body.message, /blocked .* range/);
      }
      assert.equal(dialer.stats.connectAttempts, 0);
      assert.equal(spy.calls.length, 0);
    });
  }
});

/** POST over a connection of its own that closes afterwards, so no keep-alive socket outlives the request. */
function postClosing(url: string, token: string, path: string, json: unknown): Promise<{ status: number; body: unknown }> {
  const payload = JSON.stringify(json);
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}${path}`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), connection: 'close' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

test('20 concurrent scan-range requests of 1000 ports: all correct, and file descriptors back to the baseline', async (t) => {
  const b = await build(t, { env: LOOPBACK_ENV });
  const quiet = quietLowPorts(997);
  const ports = [...openPorts(), ...quiet];
  assert.equal(ports.length, 1000);

  // One request first, so lazily opened things (the services table, SQLite statements) are not counted.
  const warm = await postClosing(b.url, b.token, '/api/port/scan-range', { host: '127.0.0.1', ports: [1] });
  assert.equal(warm.status, 200);
  const baseline = await steadyFds();

  // Two accounts, ten each: one account may have only 16 probing requests in flight.
  const second = await b.accounts.createAccount({ email: 'second@example.com', name: 'Second', plan: 'enterprise' });
  const responses = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      postClosing(b.url, i % 2 === 0 ? b.token : second.token, '/api/port/scan-range', { host: '127.0.0.1', ports, timeout: 3 }),
    ),
  );
  for (const r of responses) {
    assert.equal(r.status, 200);
    const items = (r.body as Ok<Item[]>).data;
    assert.equal(items.length, 1000);
    assert.deepEqual(items.filter((i) => i.open).map((i) => i.port), openPorts());
    assert.equal(items.filter((i) => i.state === 'closed').length, 997);
  }

  // Sockets close a few ticks after their last event; wait for the count to settle, then compare.
  assert.equal(await steadyFds(baseline), baseline);
});

/** The descriptor count once it has stopped changing between two looks 20 ms apart (or has come down to `target`). */
async function steadyFds(target?: number): Promise<number> {
  // The first look has none before it: the count settles over two looks, never one.
  let last: number | undefined;
  return eventually(
    () => {
      const [before, now] = [last, openFds()];
      last = now;
      return { before, now };
    },
    ({ before, now }) => (target !== undefined ? now <= target : now === before),
    { intervalMs: 20, what: target === undefined ? 'the descriptor count to settle' : `the descriptor count back to ${target}` },
  ).then(({ now }) => now);
}

const NETNS_CHILD = fileURLToPath(new URL('../domain/ports/fixtures/api-in-netns.ts', import.meta.url));

test('ports that drop SYNs are filtered after the timeout; the others open and closed', { skip: blackholeUnavailable() ?? false }, async (t) => {
  // A fresh network namespace whose loopback silently drops TCP to ports 20002-20003 and to
  // the whole of 127.0.0.3: the real app runs there and is asked through HTTP.
  const out = await runInBlackhole(NETNS_CHILD, [JSON.stringify({
    listen: [20001],
    requests: [
      { path: '/api/port/scan-range', body: { host: '127.0.0.1', ports: [20004, 20003, 20002, 20001], timeout: 1 } },
      { path: '/api/port/scan', body: { host: '127.0.0.1', port: 20002, timeout: 1 } },
      { path: '/api/port/scan-range', body: { host: '127.0.0.3', ports: Array.from({ length: 1000 }, (_, i) => i + 1), timeout: 1 } },
    ],
  })], { host: '127.0.0.3', ports: [20002, 20003] });
  assert.equal(out.code, 0, out.stderr);
  const [range, single, silent] = (JSON.parse(out.stdout) as { responses: Array<{ status: number; body: Ok<Item[]> & Ok<Item> }> }).responses;

  // The schema check needs an app of the same build; this one never dials.
  const b = await build(t);
  for (const [path, r] of [['/api/port/scan-range', range], ['/api/port/scan', single], ['/api/port/scan-range', silent]] as const) {
    assert.equal(r!.status, 200, JSON.stringify(r!.body));
    await assertMatchesOpenApi(b.app, 'POST', path, 200, r!.body);
  }
  assert.deepEqual((range!.body.data as Item[]).map((i) => [i.port, i.state, i.open]), [
    [20001, 'open', true],
    [20002, 'filtered', false],
    [20003, 'filtered', false],
    [20004, 'closed', false],
  ]);
  const filtered = (range!.body.data as Item[]).filter((i) => i.state === 'filtered');
  assert.ok(filtered.every((i) => i.reason === 'no answer within 1 s' && typeof i.response_time === 'number'));
  assert.equal((single!.body.data as Item).state, 'filtered');
  assert.equal((single!.body.data as Item).ip, '127.0.0.1');

  const all = silent!.body.data as Item[];
  assert.equal(all.length, 1000);
  assert.ok(all.every((i) => i.state === 'filtered' && !i.open));
  assert.equal(silent!.body.message, '1000 ports of 127.0.0.3 (127.0.0.3): 0 open, 0 closed, 1000 filtered');
});

test('a client that hangs up mid-scan cancels it: every connect ends long before the timeout, the call is recorded', async (t) => {
  // Connects that never answer: each would wait the full 30 s.
  const { fn: connectFn, sockets } = hangingConnect();
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn });
  const b = await build(t, { deps: { dialer } });
  const controller = new AbortController();
  const pending = b
    .api('/api/port/scan-range', { json: { host: '127.0.0.1', ports: Array.from({ length: 200 }, (_, i) => i + 1), timeout: 30 }, signal: controller.signal })
    .catch((err: unknown) => err);
  await eventually(() => dialer.stats.active >= 200);
  assert.equal(dialer.stats.active, 200, 'the scan is under way');
  controller.abort();
  await pending;
  // Given up before the connects' 30 s timeout: connects ended by then were ended by the hang-up.
  await eventually(() => dialer.stats.active === 0, { timeoutMs: 20_000 });
  assert.equal(dialer.stats.active, 0, 'every connect was abandoned before the timeout');
  assert.ok(sockets.every((s) => s.destroyed));
  // The call happened (it passed the limiter), so it is in the usage, as a failure.
  const stats = (await (await b.api('/api/usage/stats')).json()) as {
    data: { today: { failed: number }; by_endpoint: Record<string, number> };
  };
  assert.equal(stats.data.by_endpoint['/port/scan-range'], 1);
  assert.equal(stats.data.today.failed, 1);
});
