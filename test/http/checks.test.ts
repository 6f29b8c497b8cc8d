import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { build } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { finishedJob } from '../helpers/jobs.js';
import { connectSpy } from '../infra/net/fixtures/connect-spy.js';
import { startHttpCheckFixture, type HttpCheckFixture } from '../fixtures/http-check-server.js';
import { makeTestPki, startTlsServers, type TestPki, type TlsServers } from '../fixtures/tls-pki.js';

type Ok<T> = { success: true; data: T; message: string };
type Err = { success: false; error: string; message: string; details?: { field?: string } };

let fx: HttpCheckFixture;
let pki: TestPki;
let tls: TlsServers;
before(async () => {
  fx = await startHttpCheckFixture();
  pki = makeTestPki();
  tls = await startTlsServers(pki);
});
after(async () => {
  await fx.close();
  await tls.close();
  pki.remove();
});

const env = () => ({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_EXTRA_CA_CERTS: pki.caFile });

test('POST /api/http/check follows the chain; the answer and its job match the OpenAPI document', async (t) => {
  const { api, app } = await build(t, { env: env() });
  const res = await api('/api/http/check', { json: { url: fx.url('/r1') } });
  const body = (await res.json()) as Ok<{ status: number; redirects: unknown[]; final_url: string; body_sha256: string; error: null }>;
  assert.equal(res.status, 200, JSON.stringify(body));
  await assertMatchesOpenApi(app, 'POST', '/api/http/check', 200, body);
  assert.equal(body.data.status, 200);
  assert.equal(body.data.redirects.length, 3);
  assert.equal(body.data.final_url, fx.url('/final'));
  assert.equal(body.message, `${fx.url('/final')}: HTTP 200 after 3 redirects`);

  const created = await api('/api/http/check', { json: { url: fx.url('/final'), method: 'HEAD' }, headers: { prefer: 'respond-async' } });
  assert.equal(created.status, 202);
  const { job } = await finishedJob<{ status: number; body_bytes: number }>(api, ((await created.json()) as Ok<{ id: string }>).data.id);
  assert.equal(job.status, 'succeeded');
  assert.equal(job.result.status, 200);
  assert.equal(job.result.body_bytes, 0);
});

test('POST /api/tls/check: the good and the expired fixture, 200 both, the verdict in the data', async (t) => {
  const { api, app } = await build(t, { env: env() });
  const good = await api('/api/tls/check', { json: { host: '127.0.0.1', port: tls.ports.good, servername: 'good.test' } });
  const gbody = (await good.json()) as Ok<{ authorized: boolean; certificate: { subject: string }; chain: unknown[] }>;
  assert.equal(good.status, 200, JSON.stringify(gbody));
  await assertMatchesOpenApi(app, 'POST', '/api/tls/check', 200, gbody);
  assert.equal(gbody.data.authorized, true);
  assert.equal(gbody.data.certificate.subject, 'CN=good.test,O=netdiag tests');
  assert.equal(gbody.data.chain.length, 3);

  const expired = await api('/api/tls/check', { json: { host: '127.0.0.1', port: tls.ports.expired, servername: 'good.test' } });
  const ebody = (await expired.json()) as Ok<{ authorized: boolean; authorization_error: string; hostname_match: boolean }>;
  assert.equal(expired.status, 200);
  await assertMatchesOpenApi(app, 'POST', '/api/tls/check', 200, ebody);
  assert.deepEqual([ebody.data.authorized, ebody.data.authorization_error, ebody.data.hostname_match], [false, 'CERT_HAS_EXPIRED', true]);
  assert.match(ebody.message, /certificate not trusted \(CERT_HAS_EXPIRED\)/);

  const created = await api('/api/tls/check', { json: { host: '127.0.0.1', port: tls.ports.selfsigned }, headers: { prefer: 'respond-async' } });
  assert.equal(created.status, 202);
  const { job } = await finishedJob<{ authorization_error: string }>(api, ((await created.json()) as Ok<{ id: string }>).data.id);
  assert.equal(job.result.authorization_error, 'DEPTH_ZERO_SELF_SIGNED_CERT');
});

test('forbidden targets are 403 before any connect, synchronous and as a job; bad input is a 400 naming the field', async (t) => {
  const spy = connectSpy();
  const dialer = createDialer(loadConfig({ NETDIAG_DNS_SERVERS: '127.0.0.1:1' }), { connectFn: spy.fn });
  const { api, app } = await build(t, { deps: { dialer } });
  for (const [path, json] of [
    ['/api/http/check', { url: fx.url('/final') }],
    ['/api/http/check', { url: 'http://[::1]:8080/' }],
    ['/api/http/check', { url: 'http://169.254.169.254/latest/meta-data/' }],
    ['/api/tls/check', { host: '127.0.0.1', port: tls.ports.good }],
    ['/api/tls/check', { host: '10.0.0.1' }],
  ] as const) {
    for (const headers of [{}, { prefer: 'respond-async' }] as Array<Record<string, string>>) {
      const res = await api(path, { json, headers });
      const body = (await res.json()) as Err;
      assert.equal(res.status, 403, `${path} ${JSON.stringify(json)}`);
      assert.equal(body.error, 'target_forbidden');
      await assertMatchesOpenApi(app, 'POST', path, 403, body);
    }
  }
  assert.equal(spy.calls.length, 0);

  const bad: Array<[string, unknown, string, RegExp]> = [
    ['/api/http/check', { url: 'ftp://example.com/' }, 'url', /^url: must be an http/],
    ['/api/http/check', { url: 'http://u:p@example.com/' }, 'url', /^url: must not carry a user name or password/],
    ['/api/http/check', { url: 'nonsense' }, 'url', /^url: must be an absolute/],
    ['/api/http/check', { url: 'http://example.com/', method: 'POST' }, 'method', /^method: /],
    ['/api/http/check', { url: 'http://example.com/', timeout: 31 }, 'timeout', /^timeout: /],
    ['/api/http/check', { url: 'http://example.com/', follow_redirects: 'yes' }, 'follow_redirects', /^follow_redirects: /],
    ['/api/tls/check', { host: '' }, 'host', /^host: /],
    ['/api/tls/check', { host: 'example.com', port: 0 }, 'port', /^port: /],
    ['/api/tls/check', { host: 'example.com', servername: 'bad name' }, 'servername', /^servername: /],
    ['/api/tls/check', { host: 'example.com', timeout: 0 }, 'timeout', /^timeout: /],
  ];
  for (const [path, json, field, message] of bad) {
    const res = await api(path, { json });
    const body = (await res.json()) as Err;
    assert.equal(res.status, 400, `${path} ${JSON.stringify(json)}: ${JSON.stringify(body)}`);
    assert.equal(body.error, 'validation_error');
    assert.equal(body.details?.field, field, JSON.stringify(body));
    assert.match(body.message, message);
  }
  assert.equal(spy.calls.length, 0);
});
