import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createClient, NetdiagConnectionError, NetdiagError, type Answer, type NetdiagClient } from '../../../clients/typescript/src/index.js';
import { startDnsServer } from '../../fixtures/dns-server.js';
import { build } from '../../helpers/build.js';
import { freePort } from '../../helpers/free-port.js';

/**
 * @netdiag/client's calls against a live server on loopback, its DNS answered by a loopback
 * fixture: typed data, error answers, an unreachable server, the untyped request().
 */

/** Never called: what tsc must accept, and refuse, of the generated types. */
async function _typeChecks(client: NetdiagClient): Promise<void> {
  const { data } = await client.dnsLookup({ domain: 'example.test', type: 'MX' });
  const ttls: number[] = data.records.map((r) => r.ttl);
  // @ts-expect-error the 200's data is the answer, never the job (no union with the 202)
  void data.progress;
  // @ts-expect-error a type the document does not list
  void client.dnsLookup({ domain: 'example.test', type: 'BOGUS' });
  await client.submit('/port/scan-range', { host: '127.0.0.1', ports: [80, 443] });
  // @ts-expect-error submit knows the operation's body: ports is a list or a string
  await client.submit('/port/scan-range', { host: '127.0.0.1', ports: 80 });
  // Any other path takes any object (the CLI's generic use).
  const path: string = '/port/scan-range';
  await client.submit(path, { host: '127.0.0.1', ports: 80 });
  void ttls;
}

test('@netdiag/client against a live server', async (t) => {
  const dns = await startDnsServer({
    records: [
      { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' },
      { name: 'example.test', type: 'MX', ttl: 600, data: { preference: 10, exchange: 'mail.example.test' } },
    ],
  });
  t.after(() => dns.close());
  const b = await build(t, { env: { NETDIAG_DNS_SERVERS: `${dns.host}:${dns.port}` } });
  const client = createClient({ baseUrl: b.url, token: b.token });

  await t.test('a synchronous call: data typed as the 200 answer, not the job', async () => {
    const { data, message } = await client.dnsLookup({ domain: 'example.test', type: 'A' });
    // No narrowing, no cast: `records` is only on the 200's data (tsc checks this file).
    const ttl: number | undefined = data.records[0]?.ttl;
    const address: string | undefined = data.records[0]?.address;
    assert.equal(ttl, 300);
    assert.equal(address, '192.0.2.10');
    assert.equal(data.status, 'NOERROR');
    assert.equal(typeof message, 'string');
    const mx = await client.dnsLookup({ domain: 'example.test', type: 'MX' });
    assert.deepEqual(
      mx.data.records.map((r) => [r.priority, r.exchange, r.ttl]),
      [[10, 'mail.example.test', 600]],
    );
  });

  await t.test('the answer comes with its response: the rate-limit headers are there', async () => {
    const { response } = await client.ipv6Expand({ ipv6: '2001:db8::1' });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
  });

  await t.test("an error answer is a NetdiagError with the API's status, code, message and details", async () => {
    const err = await client.dnsLookup({ domain: 'example.test', type: 'BOGUS' as 'A' }).then(
      () => assert.fail('a bad type was accepted'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof NetdiagError, String(err));
    assert.equal(err.status, 400);
    assert.equal(err.code, 'validation_error');
    assert.match(err.message, /type/);
    assert.equal(err.details?.field, 'type');
    assert.ok(err.headers.get('content-type')?.startsWith('application/json'));
  });

  await t.test('a bad token is a NetdiagError 401 unauthorized, WWW-Authenticate in its headers', async () => {
    const stranger = createClient({ baseUrl: b.url, token: 'nd_not-a-token' });
    const err = await stranger.ipv6Expand({ ipv6: '::1' }).catch((e: unknown) => e);
    assert.ok(err instanceof NetdiagError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.code, 'unauthorized');
    assert.match(err.headers.get('www-authenticate') ?? '', /^Bearer realm="netdiag"/);
  });

  await t.test('request(): any path under /api, untyped; a query; a CSV answer is its text', async () => {
    const stats = await client.request('GET', '/usage/stats');
    assert.equal(stats.response.status, 200);
    assert.ok(stats.data !== null && typeof stats.data === 'object');
    const csv = await client.request('GET', '/usage/export', { query: { format: 'csv', days: 2, unused: undefined } });
    assert.equal(typeof csv.data, 'string');
    assert.match(String(csv.data).split('\n')[0] ?? '', /^date,endpoint/);
    const missing = await client.request('GET', '/no/such/path').catch((e: unknown) => e);
    assert.ok(missing instanceof NetdiagError);
    assert.equal(missing.status, 404);
    assert.equal(missing.code, 'not_found');
  });

  await t.test('an answer over maxBytes is refused, not read whole', async () => {
    const small = createClient({ baseUrl: b.url, token: b.token, maxBytes: 64 });
    const err = await small.dnsLookup({ domain: 'example.test', type: 'A' }).catch((e: unknown) => e);
    assert.ok(err instanceof NetdiagError, String(err));
    assert.equal(err.code, 'response_too_large');
  });

  await t.test('headers and fetch given to createClient are used for every request', async () => {
    const seen: Request[] = [];
    const spying = createClient({
      baseUrl: `${b.url}/`,
      token: b.token,
      headers: { 'user-agent': 'netdiag-client-test' },
      fetch: (input, init) => {
        seen.push(input instanceof Request ? input.clone() : new Request(input, init));
        return fetch(input, init);
      },
    });
    const answer: Answer<unknown> = await spying.ipv6Expand({ ipv6: '::1' });
    assert.equal(answer.response.status, 200);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.url, `${b.url}/api/ipv6/expand`);
    assert.equal(seen[0]!.headers.get('user-agent'), 'netdiag-client-test');
    assert.equal(seen[0]!.headers.get('authorization'), `Bearer ${b.token}`);
  });
});

test('a server that cannot be reached is a NetdiagConnectionError naming it', async () => {
  const port = await freePort();
  const client = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: 'nd_x' });
  const err = await client.ipv6Expand({ ipv6: '::1' }).catch((e: unknown) => e);
  assert.ok(err instanceof NetdiagConnectionError, String(err));
  assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
  assert.ok(!(err instanceof NetdiagError));
});

test('an aborted call rejects with the abort, not a connection error', async (t) => {
  const b = await build(t);
  const client = createClient({ baseUrl: b.url, token: b.token });
  const abort = new AbortController();
  abort.abort(new Error('stopped by the caller'));
  const err = await client.ipv6Expand({ ipv6: '::1' }, { signal: abort.signal }).catch((e: unknown) => e);
  assert.ok(!(err instanceof NetdiagConnectionError), String(err));
  assert.equal((err as Error).message, 'stopped by the caller');
});
