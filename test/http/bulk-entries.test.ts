import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { build, type Built } from '../helpers/build.js';
import { finishedJob } from '../helpers/jobs.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { startDnsServer, type DnsFixture } from '../fixtures/dns-server.js';
import { startHttpProxy, startTlsTarget, type Running } from '../fixtures/proxies.js';

/**
 * docs/proxy.md, "Bulk calls agree on bad entries": in a proxy, IP or DNS bulk, an entry
 * that is not valid, or whose target is forbidden, gets an item in its place with `error` (naming
 * the entry's index and the rule) and `error_code`; proxies also `status: "failed"`; every other
 * entry is still answered. Only an array that is itself wrong is a 400. The same as a job.
 */

type Item = Record<string, unknown> & { error?: string; error_code?: string };
const PASSWORD = 's3cr3t-pw';

let elite: Running;
let tlsTarget: Running;
let dns: DnsFixture;
before(async () => {
  elite = await startHttpProxy({ kind: 'elite' });
  tlsTarget = await startTlsTarget();
  dns = await startDnsServer({ records: [{ name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' }] });
});
after(() => Promise.all([elite.close(), tlsTarget.close(), dns.close()]));

async function app(t: TestContext): Promise<{ b: Built; dialer: ReturnType<typeof createDialer> }> {
  // Only loopback is allowed: 10.x is forbidden. The dialer's resolver is the loopback fixture.
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}` }));
  const b = await build(t, {
    env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_SSL_CHECK_TARGET: tlsTarget.address, NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}` },
    deps: { dialer },
  });
  return { b, dialer };
}

/** The synchronous answer's `data`, checked against the OpenAPI document. */
async function sync(b: Built, path: string, json: unknown): Promise<Item[]> {
  const res = await b.api(`/api${path}`, { json });
  const body = (await res.json()) as { data: Item[] };
  assert.equal(res.status, 200, JSON.stringify(body));
  await assertMatchesOpenApi(b.app, 'POST', `/api${path}`, 200, body);
  return body.data;
}

/** The same call as a job: its `result` once it has finished. */
async function asJob(b: Built, path: string, json: unknown): Promise<{ result: Item[]; raw: string }> {
  const res = await b.api(`/api${path}`, { json, headers: { prefer: 'respond-async' } });
  const created = (await res.json()) as { data: { id: string } };
  assert.equal(res.status, 202, JSON.stringify(created));
  const { job, text } = await finishedJob<Item[]>(b.api, created.data.id);
  assert.equal(job.status, 'succeeded', text);
  return { result: job.result, raw: text };
}

const proxies = () => [elite.address, '127.0.0.1:99999', '10.1.2.3:8080', `alice:${PASSWORD}@10.1.2.4:8080`, `http://alice:${PASSWORD}@127.0.0.1:8080/x`];
const PROXY_FLAGS = { check_speed: false, check_ssl: false, check_location: false };

function assertProxyItems(items: Item[], raw: string): void {
  assert.equal(items.length, 5);
  assert.equal(items[0]!.status, 'working');
  assert.equal(items[0]!.error_code, undefined);
  assert.deepEqual([items[1]!.status, items[1]!.error_code], ['failed', 'validation_error']);
  assert.match(items[1]!.error!, /^proxies\[1\]: port must be 1-65535, got 99999/);
  assert.deepEqual([items[2]!.status, items[2]!.error_code], ['failed', 'target_forbidden']);
  assert.match(items[2]!.error!, /^proxies\[2\]: .*10\.1\.2\.3.*blocked/);
  assert.deepEqual([items[3]!.status, items[3]!.error_code, items[3]!.proxy], ['failed', 'target_forbidden', 'alice:***@10.1.2.4:8080']);
  assert.match(items[3]!.error!, /^proxies\[3\]: /);
  assert.deepEqual([items[4]!.status, items[4]!.error_code], ['failed', 'validation_error']);
  assert.equal(items[4]!.proxy, 'http://alice:***@127.0.0.1:8080/x');
  assert.match(items[4]!.error!, /^proxies\[4\]: "http:\/\/alice:\*\*\*@127\.0\.0\.1:8080\/x" has a path/);
  assert.ok(!raw.includes(PASSWORD), 'no password in any item');
}

describe('proxy bulk', () => {
  test('synchronous: bad and forbidden entries get items naming their index; the good one is checked', async (t) => {
    const { b, dialer } = await app(t);
    const res = await b.api('/api/proxy/check-bulk', { json: { proxies: proxies(), ...PROXY_FLAGS } });
    const raw = await res.text();
    assert.equal(res.status, 200, raw);
    const body = JSON.parse(raw) as { data: Item[]; message: string };
    await assertMatchesOpenApi(b.app, 'POST', '/api/proxy/check-bulk', 200, body);
    assertProxyItems(body.data, raw);
    assert.ok(!body.message.includes(PASSWORD));
    assert.ok(dialer.stats.connectAttempts > 0, 'the valid proxy was checked');
  });

  test('as a job: the same items', async (t) => {
    const { b } = await app(t);
    const { result, raw } = await asJob(b, '/proxy/check-bulk', { proxies: proxies(), ...PROXY_FLAGS });
    assertProxyItems(result, raw);
  });

  test('the array itself wrong is still a 400', async (t) => {
    const { b } = await app(t);
    for (const [json, message] of [
      [{ proxies: [] }, /^proxies: at least 1 entr/],
      [{ proxies: [elite.address, 7] }, /^proxies\[1\]: must be a string/],
      [{ proxies: Array.from({ length: 101 }, () => elite.address) }, /^proxies: at most 100 entries/],
    ] as const) {
      const res = await b.api('/api/proxy/check-bulk', { json });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { message: string }).message, message);
    }
  });
});

describe('IP bulk', () => {
  const ips = ['192.0.2.1', 'nonsense', 'x'.repeat(500)];
  const check = (items: Item[]): void => {
    assert.equal(items.length, 3);
    assert.equal(items[0]!.type, 'documentation');
    assert.deepEqual(items[1], { ip: 'nonsense', error: 'ips[1]: must be an IPv4 or IPv6 address', error_code: 'validation_error' });
    assert.equal(items[2]!.error_code, 'validation_error');
    assert.match(items[2]!.error!, /^ips\[2\]: /);
  };
  test('synchronous and as a job: an item per bad entry, naming its index, with error_code', async (t) => {
    const { b } = await app(t);
    check(await sync(b, '/ip/lookup-bulk', { ips }));
    check((await asJob(b, '/ip/lookup-bulk', { ips })).result);
  });
});

describe('DNS bulk', () => {
  const domains = ['example.test', 'bad..example.test', '', 'x'.repeat(400)];
  const check = (items: Item[]): void => {
    assert.equal(items.length, 4);
    assert.deepEqual([items[0]!.status, items[0]!.error_code], ['NOERROR', undefined]);
    assert.deepEqual(items[1], {
      domain: 'bad..example.test',
      type: 'A',
      error: 'domains[1]: must not contain an empty label (two dots in a row, or a leading dot)',
      error_code: 'validation_error',
    });
    assert.equal(items[2]!.error, 'domains[2]: must not be empty');
    assert.equal(items[3]!.error, 'domains[3]: must be at most 300 characters');
    assert.ok(items.slice(1).every((i) => i.error_code === 'validation_error'));
  };
  test('synchronous and as a job: an item per bad entry, the rest looked up', async (t) => {
    const { b } = await app(t);
    dns.resetLog();
    check(await sync(b, '/dns/lookup-bulk', { domains }));
    check((await asJob(b, '/dns/lookup-bulk', { domains })).result);
    assert.equal(dns.count({ name: 'bad..example.test' }), 0, 'a bad entry is never asked');
  });
  test('a bad type is still a 400 (it is not an entry)', async (t) => {
    const { b } = await app(t);
    const res = await b.api('/api/dns/lookup-bulk', { json: { domains: ['example.test'], type: 'ANY' } });
    assert.equal(res.status, 400);
  });
});
