import { eventually } from '../helpers/eventually.js';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDialer } from '../../src/infra/net/dialer.js';
import { PROXY_TRY_HEAD_START_MS } from '../../src/domain/proxy/defaults.js';
import { loadConfig } from '../../src/config.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import {
  closedProxyPort,
  EXIT_ADDRESS,
  startHttpProxy,
  startSilentPort,
  startSocksProxy,
  startTlsTarget,
  type Running,
} from '../fixtures/proxies.js';

const LOOPBACK = '127.0.0.0/8,::1/128';
const AUTH = { username: 'alice', password: 's3cr:et@x' };

interface Result {
  proxy: string;
  status: string;
  protocol: string | null;
  response_time: number | null;
  anonymity_level?: string | null;
  proxy_headers?: string[];
  ssl_support?: boolean | null;
  location?: Record<string, unknown> | null;
  speed?: { download: string | null; upload: string | null; latency: string | null } | null;
  exit_ip: string | null;
  error: string | null;
  checked_at: string;
  checks: Record<string, { status: string; error: string | null; tried?: string[] }>;
}

const fixtures: Record<string, Running> = {};
let closed = '';
const seenByTransparent: string[] = [];

before(async () => {
  fixtures.transparent = await startHttpProxy({ kind: 'transparent', seen: seenByTransparent });
  fixtures.anonymous = await startHttpProxy({ kind: 'anonymous' });
  fixtures.elite = await startHttpProxy({ kind: 'elite' });
  fixtures.httpAuth = await startHttpProxy({ auth: AUTH });
  fixtures.httpOnly = await startHttpProxy({ noConnect: true });
  fixtures.connectOnly = await startHttpProxy({ kind: 'transparent', connectOnly: true });
  // Relays plain HTTP only after the CONNECT try (which starts after the head start) is through.
  fixtures.slowRelay = await startHttpProxy({ relayDelayMs: 3 * PROXY_TRY_HEAD_START_MS });
  fixtures.socks5 = await startSocksProxy({ version: 5 });
  fixtures.socks5Auth = await startSocksProxy({ version: 5, auth: AUTH });
  fixtures.socks4 = await startSocksProxy({ version: 4 });
  fixtures.socks5v6 = await startSocksProxy({ version: 5, host: '::1' });
  fixtures.silent = await startSilentPort();
  fixtures.tls = await startTlsTarget();
  closed = await closedProxyPort();
});
after(async () => {
  await Promise.all(Object.values(fixtures).map((f) => f.close()));
});

async function app(t: import('node:test').TestContext, extra: Parameters<typeof build>[1] = {}): Promise<Built> {
  return build(t, {
    ...extra,
    env: { NETDIAG_ALLOW_TARGETS: LOOPBACK, NETDIAG_SSL_CHECK_TARGET: fixtures.tls!.address, ...extra.env },
  });
}

async function check(b: Built, body: Record<string, unknown>): Promise<{ status: number; body: { success: boolean; data: Result; message: string; error?: string } }> {
  const res = await b.api('/api/proxy/check', { json: body });
  const json = (await res.json()) as { success: boolean; data: Result; message: string; error?: string };
  await assertMatchesOpenApi(b.app, 'POST', '/api/proxy/check', res.status, json);
  return { status: res.status, body: json };
}

const f = (name: string): string => fixtures[name]!.address;
const withCreds = (name: string, user: string, pass: string): string => `${f(name)}:${user}:${pass}`;
/** A figure, or what a transfer too short to time says instead (issue 24: loopback is that fast). */
const SPEED = /^(\d+(\.\d+)? Mbps|too fast to measure)$/;

function assertWorking(r: Result, protocol: string): void {
  assert.equal(r.status, 'working', `expected working, got ${r.status}: ${r.error}`);
  assert.equal(r.protocol, protocol);
  assert.equal(r.error, null);
  assert.equal(r.exit_ip, EXIT_ADDRESS, 'the judge sees the proxy exit address, not ours');
  assert.ok(typeof r.response_time === 'number' && r.response_time > 0);
}

describe('POST /api/proxy/check against real loopback proxies', () => {
  test('an HTTP proxy that adds X-Forwarded-For with our address is transparent, with every field of docs/proxy.md', async (t) => {
    const b = await app(t);
    const { status, body } = await check(b, { proxy: f('transparent') });
    assert.equal(status, 200);
    assert.equal(body.success, true);
    const r = body.data;
    assertWorking(r, 'http');
    assert.equal(r.proxy, f('transparent'));
    assert.equal(r.anonymity_level, 'transparent');
    assert.deepEqual(r.proxy_headers, ['X-Forwarded-For']);
    assert.equal(r.ssl_support, true);
    assert.match(r.speed!.download!, SPEED);
    assert.match(r.speed!.upload!, SPEED);
    assert.match(r.speed!.latency!, /^\d+(\.\d+)?ms$/);
    assert.deepEqual(r.location, { country: null, country_code: null, city: null, region: null, isp: null }, 'loopback exits have no location');
    assert.match(r.checked_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.deepEqual(r.checks.protocol!.tried, ['http'], 'a quick HTTP answer leaves the other protocols untried');
    for (const step of ['protocol', 'anonymity', 'ssl', 'speed']) assert.equal(r.checks[step]!.status, 'ok', step);
  });

  test('an HTTP proxy that adds only Via is anonymous', async (t) => {
    const { body } = await check(await app(t), { proxy: f('anonymous') });
    assertWorking(body.data, 'http');
    assert.equal(body.data.anonymity_level, 'anonymous');
    assert.deepEqual(body.data.proxy_headers, ['Via']);
  });

  test('an HTTP proxy that adds nothing is elite', async (t) => {
    const { body } = await check(await app(t), { proxy: f('elite') });
    assertWorking(body.data, 'http');
    assert.equal(body.data.anonymity_level, 'elite');
    assert.deepEqual(body.data.proxy_headers, []);
    assert.equal(body.data.ssl_support, true);
  });

  test('an authenticating HTTP proxy works with the right password in every input form', async (t) => {
    const b = await app(t);
    const { port } = fixtures.httpAuth!;
    const forms = [
      withCreds('httpAuth', AUTH.username, AUTH.password),
      `${AUTH.username}:${AUTH.password}@127.0.0.1:${port}`,
      `http://${AUTH.username}:${encodeURIComponent(AUTH.password)}@127.0.0.1:${port}`,
      `https://${AUTH.username}:${encodeURIComponent(AUTH.password)}@127.0.0.1:${port}/`,
    ];
    // `proxy` is the input with its password replaced by ***.
    const shown = [
      `${f('httpAuth')}:${AUTH.username}:***`,
      `${AUTH.username}:***@127.0.0.1:${port}`,
      `http://${AUTH.username}:***@127.0.0.1:${port}`,
      `https://${AUTH.username}:***@127.0.0.1:${port}/`,
    ];
    const protocols = ['http', 'http', 'http', 'https'];
    for (const [i, proxy] of forms.entries()) {
      const { status, body } = await check(b, { proxy, check_speed: false });
      assert.equal(status, 200);
      assertWorking(body.data, protocols[i]!);
      assert.equal(body.data.proxy, shown[i]);
      assert.equal(body.message, `${shown[i]}: working (${protocols[i]})`);
      assert.equal(body.data.ssl_support, true, proxy);
    }
  });

  test('an authenticating HTTP proxy refuses a wrong password, and says when credentials are missing', async (t) => {
    const b = await app(t);
    const wrongBody = (await check(b, { proxy: withCreds('httpAuth', AUTH.username, 'wrong') })).body;
    const wrong = wrongBody.data;
    assert.equal(wrong.status, 'failed');
    // the message gives the reason, and never the password (issue 16)
    assert.equal(wrongBody.message, `${wrong.proxy}: failed (${wrong.error})`);
    assert.match(wrongBody.message, /:\*\*\*: failed \(the proxy refused our credentials \(HTTP 407/);
    assert.doesNotMatch(wrongBody.message, /wrong/);
    assert.match(wrong.error!, /refused our credentials \(HTTP 407/);
    assert.equal(wrong.protocol, null);
    assert.equal(wrong.anonymity_level, null);
    const none = (await check(b, { proxy: f('httpAuth') })).body.data;
    assert.equal(none.status, 'failed');
    assert.match(none.error!, /requires credentials/);
  });

  test('a proxy whose CONNECT reaches the judge before its plain relay is still reported http: each try has its own nonce', async (t) => {
    const b = await app(t);
    const { body } = await check(b, { proxy: f('slowRelay'), check_anonymity: false, check_ssl: false });
    assertWorking(body.data, 'http');
    assert.deepEqual(body.data.checks.protocol!.tried!.slice(0, 2), ['http', 'https'], 'CONNECT was tried while the relay was slow');
    assert.match(body.data.speed!.download!, SPEED, "the winner's nonce still has its download and upload");
  });

  test('a SOCKS5 proxy without auth: detected, elite, carries TLS', async (t) => {
    const { body } = await check(await app(t), { proxy: f('socks5') });
    assertWorking(body.data, 'socks5');
    assert.deepEqual(body.data.checks.protocol!.tried, ['http', 'https', 'socks5'], 'tried in order of preference; socks4 not needed');
    assert.equal(body.data.anonymity_level, 'elite');
    assert.equal(body.data.ssl_support, true);
    assert.match(body.data.speed!.download!, SPEED);
  });

  test('a SOCKS5 proxy with username/password auth: right and wrong credentials', async (t) => {
    const b = await app(t);
    const bare = (await check(b, { proxy: withCreds('socks5Auth', AUTH.username, AUTH.password), check_speed: false })).body.data;
    assertWorking(bare, 'socks5');
    const url = (await check(b, { proxy: `socks5://${AUTH.username}:${encodeURIComponent(AUTH.password)}@${f('socks5Auth')}`, check_speed: false })).body.data;
    assertWorking(url, 'socks5');
    assert.deepEqual(url.checks.protocol!.tried, ['socks5'], 'a scheme means only that protocol is tried');
    const wrong = (await check(b, { proxy: `socks5://${AUTH.username}:nope@${f('socks5Auth')}` })).body.data;
    assert.equal(wrong.status, 'failed');
    assert.match(wrong.error!, /refused our credentials/);
    const missing = (await check(b, { proxy: f('socks5Auth') })).body.data;
    assert.equal(missing.status, 'failed');
    assert.match(missing.error!, /requires credentials/);
  });

  test('a SOCKS4 proxy is detected as socks4', async (t) => {
    const { body } = await check(await app(t), { proxy: f('socks4') });
    assertWorking(body.data, 'socks4');
    assert.equal(body.data.anonymity_level, 'elite');
    assert.equal(body.data.ssl_support, true);
  });

  test('IPv6 proxy hosts in brackets, bare and as a URL', async (t) => {
    const b = await app(t);
    const forms: Array<[string, string]> = [
      [f('socks5v6'), f('socks5v6')],
      [`socks5://${f('socks5v6')}`, `socks5://${f('socks5v6')}`],
      [`socks5h://u:p@${f('socks5v6')}/`, `socks5h://u:***@${f('socks5v6')}/`],
      [`${f('socks5v6')}:u:p`, `${f('socks5v6')}:u:***`],
      [`u:p@${f('socks5v6')}`, `u:***@${f('socks5v6')}`],
    ];
    for (const [proxy, shown] of forms) {
      const { body } = await check(b, { proxy, check_speed: false, check_ssl: false });
      assertWorking(body.data, 'socks5');
      assert.equal(body.data.proxy, shown);
    }
  });

  test('an HTTP proxy that refuses CONNECT works but has no SSL support', async (t) => {
    const { body } = await check(await app(t), { proxy: f('httpOnly'), check_speed: false });
    assertWorking(body.data, 'http');
    assert.equal(body.data.ssl_support, false);
    assert.equal(body.data.checks.ssl!.status, 'failed');
    assert.match(body.data.checks.ssl!.error!, /did not open a tunnel/);
  });

  test('a bare proxy that only tunnels (CONNECT) is reported as https; headers cannot be added inside its tunnel', async (t) => {
    const { body } = await check(await app(t), { proxy: f('connectOnly'), check_speed: false });
    assertWorking(body.data, 'https');
    assert.deepEqual(body.data.checks.protocol!.tried, ['http', 'https']);
    assert.equal(body.data.anonymity_level, 'elite');
    assert.equal(body.data.ssl_support, true);
  });

  test('a port that accepts and says nothing is a timeout with a reason, not a hung request', async (t) => {
    const b = await app(t, { deps: { proxyTimeouts: { protocolMs: 300 } } });
    const { status, body } = await check(b, { proxy: f('silent') });
    assert.equal(status, 200);
    assert.equal(body.data.status, 'timeout');
    assert.match(body.data.error!, /did not answer within 300 ms/);
    assert.equal(body.data.protocol, null);
    assert.equal(body.data.response_time, null);
    assert.equal(body.data.checks.protocol!.status, 'timeout');
  });

  test('a closed port has failed: connection refused', async (t) => {
    const { body } = await check(await app(t), { proxy: closed });
    assert.equal(body.data.status, 'failed');
    assert.match(body.data.error!, /connection refused/);
    assert.equal(body.data.exit_ip, null);
  });

  test('each check_* flag set to false skips its work and omits its field', async (t) => {
    const b = await app(t);
    const { body } = await check(b, { proxy: f('elite'), check_ssl: false, check_anonymity: false, check_speed: false, check_location: false });
    const r = body.data;
    assertWorking(r, 'http');
    for (const field of ['ssl_support', 'anonymity_level', 'proxy_headers', 'speed', 'location']) assert.ok(!(field in r), `${field} omitted`);
    assert.deepEqual(Object.keys(r.checks), ['protocol']);
    const only = (await check(b, { proxy: f('elite'), check_ssl: false, check_speed: false })).body.data;
    assert.ok('anonymity_level' in only && 'location' in only && !('speed' in only) && !('ssl_support' in only));
  });

  test('the judge only answers a running check\'s nonce: the URL a proxy was sent to is 404 afterwards, without a token', async (t) => {
    const b = await app(t);
    seenByTransparent.length = 0;
    await check(b, { proxy: f('transparent'), check_speed: false, check_ssl: false });
    const judged = seenByTransparent.find((u) => u.includes('/judge/'));
    assert.ok(judged, 'the proxy was asked for the judge');
    assert.match(judged, new RegExp(`^${b.url}/judge/[0-9a-f]{78}$`));
    const late = await fetch(judged);
    assert.equal(late.status, 404);
    const madeUp = '0123456789abcdef'.repeat(5).slice(0, 78);
    for (const path of ['/judge', '/judge/0123456789abcdef0123456789abcdef', `/judge/${madeUp}`, `/judge/${madeUp}/download`]) {
      const res = await fetch(b.url + path);
      assert.equal(res.status, 404, path);
    }
    const upload = await fetch(`${b.url}/judge/${madeUp}/upload`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: new Uint8Array(1024),
    });
    assert.equal(upload.status, 404);
  });
});

describe('POST /api/proxy/check-bulk', () => {
  test('every kind of proxy at once: one result each, in input order', async (t) => {
    // Short enough for the silent proxy to time out soon, long enough for the nine that answer to
    // be checked on a busy machine (ten checks at once; 500 ms was not).
    const b = await app(t, { deps: { proxyTimeouts: { protocolMs: 5_000 } } });
    const proxies = [
      f('transparent'),
      f('anonymous'),
      f('elite'),
      withCreds('httpAuth', AUTH.username, AUTH.password),
      withCreds('httpAuth', AUTH.username, 'wrong'),
      f('socks5'),
      `socks5://${AUTH.username}:${encodeURIComponent(AUTH.password)}@${f('socks5Auth')}`,
      f('socks4'),
      f('silent'),
      closed,
    ];
    const res = await b.api('/api/proxy/check-bulk', { json: { proxies, check_speed: false } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { data: Result[]; message: string };
    await assertMatchesOpenApi(b.app, 'POST', '/api/proxy/check-bulk', 200, body);
    assert.deepEqual(
      body.data.map((r) => r.proxy),
      proxies.map((p) => p.replace(`:${AUTH.password}`, ':***').replace(':wrong', ':***').replace(`:${encodeURIComponent(AUTH.password)}@`, ':***@')),
    );
    assert.ok(!JSON.stringify(body).includes(AUTH.password) && !JSON.stringify(body).includes(encodeURIComponent(AUTH.password)), 'no password in the bulk answer');
    assert.deepEqual(
      body.data.map((r) => [r.status, r.protocol, r.anonymity_level ?? null]),
      [
        ['working', 'http', 'transparent'],
        ['working', 'http', 'anonymous'],
        ['working', 'http', 'elite'],
        ['working', 'http', 'elite'],
        ['failed', null, null],
        ['working', 'socks5', 'elite'],
        ['working', 'socks5', 'elite'],
        ['working', 'socks4', 'elite'],
        ['timeout', null, null],
        ['failed', null, null],
      ],
    );
    assert.match(body.message, /10 proxies checked, 7 working/);
  });

  test('more than 100 proxies is a 400 naming the field and the rule', async (t) => {
    const b = await app(t);
    const res = await b.api('/api/proxy/check-bulk', { json: { proxies: Array.from({ length: 101 }, () => f('elite')) } });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: string; message: string; details: { field: string } };
    assert.equal(body.error, 'validation_error');
    assert.equal(body.message, 'proxies: at most 100 entries');
    await assertMatchesOpenApi(b.app, 'POST', '/api/proxy/check-bulk', 400, body);
  });

  // docs/api.md, "Bulk calls" (issue 24): was a 400 for the whole batch.
  test('one bad entry gets an item naming its index; the other proxy is still checked', async (t) => {
    const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: LOOPBACK, NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
    const b = await app(t, { deps: { dialer } });
    const res = await b.api('/api/proxy/check-bulk', { json: { proxies: [f('elite'), '127.0.0.1:99999'], check_speed: false } });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { data: Array<Result & { error_code?: string }> };
    assert.equal(body.data[0]!.status, 'working');
    assert.deepEqual([body.data[1]!.status, body.data[1]!.error_code], ['failed', 'validation_error']);
    assert.match(body.data[1]!.error!, /^proxies\[1\]: port must be 1-65535/);
  });
});

describe('input forms and the target policy', () => {
  test('bad forms are 400s naming the field and the rule', async (t) => {
    const b = await app(t);
    const cases: Array<[unknown, RegExp]> = [
      ['127.0.0.1', /^proxy: "127.0.0.1" has no port number/],
      ['127.0.0.1:0', /^proxy: port must be 1-65535, got 0/],
      ['127.0.0.1:8080:alice', /has a username but no password/],
      ['::1:8080', /looks like an IPv6 address without brackets/],
      ['ftp://127.0.0.1:21', /^proxy: scheme "ftp" is not supported/],
      ['http://127.0.0.1:8080/path', /has a path, query or fragment/],
      ['bad host:80', /contains white space/],
      ['exa_mple.com:80', /^proxy: .*hostname labels/],
      ['', /^proxy: must not be empty/],
      [8080, /^proxy: must be a string/],
      ['127.0.0.1:8080:al\r\nX-Injected: 1:pw', /white space|control characters/],
    ];
    for (const [proxy, message] of cases) {
      const { status, body } = await check(b, { proxy });
      assert.equal(status, 400, String(proxy));
      assert.equal(body.error, 'validation_error');
      assert.match(body.message, message, String(proxy));
    }
    const missing = await check(b, {});
    assert.equal(missing.status, 400);
    assert.equal(missing.body.message, 'proxy: is required');
    const flag = await check(b, { proxy: f('elite'), check_ssl: 'no' });
    assert.equal(flag.status, 400);
    assert.equal(flag.body.message, 'check_ssl: must be a boolean');
  });

  test('a loopback or private proxy is 403 target_forbidden without NETDIAG_ALLOW_TARGETS, and no packet is sent', async (t) => {
    const dialer = createDialer(loadConfig({ NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
    const b = await build(t, { deps: { dialer } });
    for (const proxy of [f('elite'), 'socks5://10.0.0.1:1080', 'user:pw@[::1]:8080', '2130706433:3128:a:b', 'localhost:3128']) {
      const { status, body } = await check(b, { proxy });
      assert.equal(status, 403, proxy);
      assert.equal(body.error, 'target_forbidden');
    }
    // A forbidden entry of a bulk is its item (docs/api.md, "Bulk calls"; was a 403).
    const bulk = await b.api('/api/proxy/check-bulk', { json: { proxies: ['192.168.1.1:8080'] } });
    assert.equal(bulk.status, 200);
    assert.equal(((await bulk.json()) as { data: Array<{ error_code: string }> }).data[0]!.error_code, 'target_forbidden');
    assert.equal(dialer.stats.connectAttempts, 0);
  });

  test('a private proxy stays forbidden when only loopback is allowed, even in a bulk with allowed ones', async (t) => {
    const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: LOOPBACK, NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
    const b = await app(t, { deps: { dialer } });
    // The forbidden entry is its item, never contacted; the allowed one is checked (was a 403 for the whole batch).
    const res = await b.api('/api/proxy/check-bulk', { json: { proxies: ['10.1.2.3:8080', f('elite')], check_speed: false, check_ssl: false } });
    assert.equal(res.status, 200);
    const data = ((await res.json()) as { data: Array<{ status: string; error_code?: string; error: string | null }> }).data;
    assert.deepEqual([data[0]!.status, data[0]!.error_code], ['failed', 'target_forbidden']);
    assert.match(data[0]!.error!, /^proxies\[0\]: target 10\.1\.2\.3 /);
    assert.equal(data[1]!.status, 'working');
    assert.ok(dialer.stats.connectAttempts >= 1, 'the allowed proxy was checked (the forbidden one alone connects nothing: the test above)');
  });
});

describe('each check has its own timeout, and a dead judge is named', () => {
  test('an SSL target that never completes a handshake: ssl_support false with a timeout, the proxy still working', async (t) => {
    const b = await app(t, { env: { NETDIAG_SSL_CHECK_TARGET: f('silent') }, deps: { proxyTimeouts: { sslMs: 300 } } });
    const { body } = await check(b, { proxy: f('socks5'), check_speed: false });
    assertWorking(body.data, 'socks5');
    assert.equal(body.data.ssl_support, false);
    assert.equal(body.data.checks.ssl!.status, 'timeout');
    assert.match(body.data.checks.ssl!.error!, /no TLS handshake through the proxy within 300 ms/);
  });

  test('a judge that is down: the proxy cannot be called working, nor failed (issue 24: a 503 naming the judge), nothing is called transparent', async (t) => {
    const deadJudge = `http://${await closedProxyPort()}/judge`;
    const b = await app(t, { env: { NETDIAG_JUDGE_URL: deadJudge } });
    const { status, body } = await check(b, { proxy: f('transparent') });
    assert.equal(status, 503);
    assert.equal(body.error, 'service_unavailable');
    assert.match(body.message, /misconfigured/);
    assert.match(body.message, /did not relay our request to the judge \(HTTP 5\d\d/);
    assert.ok(body.message.includes(`the judge ${deadJudge}`), body.message);
    assert.match(body.message, /NETDIAG_JUDGE_URL/);
  });
});

test('a client that hangs up mid-check cancels the checks: their sockets close long before the timeouts, the call is recorded', async (t) => {
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8', '::1/128'], dnsServers: [{ host: '127.0.0.1', port: 1 }] });
  // The silent port accepts and never answers: each check would wait out its protocol timeout,
  // an hour, far past eventually()'s give-up below: sockets closed by then were closed by the hang-up.
  const b = await app(t, { deps: { dialer, proxyTimeouts: { protocolMs: 3_600_000, connectMs: 3_600_000 } } });
  const controller = new AbortController();
  const pending = b
    .api('/api/proxy/check-bulk', { json: { proxies: Array.from({ length: 10 }, () => f('silent')) }, signal: controller.signal })
    .catch((err: unknown) => err);
  await eventually(() => dialer.stats.active >= 10);
  assert.ok(dialer.stats.active >= 10, `the checks are under way (${dialer.stats.active} sockets)`);
  controller.abort();
  await pending;
  await eventually(() => dialer.stats.active === 0, { what: 'the checks to close their sockets before their timeouts' });
  assert.equal(dialer.stats.active, 0, 'every socket of the checks was closed, long before the timeouts');
  const stats = (await (await b.api('/api/usage/stats')).json()) as {
    data: { today: { failed: number }; by_endpoint: Record<string, number> };
  };
  assert.equal(stats.data.by_endpoint['/proxy/check-bulk'], 1);
  assert.equal(stats.data.today.failed, 1);
});
