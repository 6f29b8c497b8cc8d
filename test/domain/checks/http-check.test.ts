import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Checker, HTTP_MAX_BODY_BYTES, HTTP_MAX_HEADER_BYTES, HTTP_MAX_REDIRECTS } from '../../../src/domain/checks/index.js';
import { loadConfig } from '../../../src/config.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { createConnector } from '../../../src/infra/net/connector.js';
import { TargetForbiddenError, ValidationError } from '../../../src/errors.js';
import { eventually } from '../../helpers/eventually.js';
import { connectSpy } from '../../infra/net/fixtures/connect-spy.js';
import { endlessSha256, KNOWN_BODY, startHttpCheckFixture, type HttpCheckFixture } from '../../fixtures/http-check-server.js';
import { makeTestPki, startTlsServers, type TestPki, type TlsServers } from '../../fixtures/tls-pki.js';
import { curlChain } from './curl.js';
import { endsDespiteSilentResolver } from './silent-resolver.js';

let fx: HttpCheckFixture;
let pki: TestPki;
let tlsServers: TlsServers;
before(async () => {
  fx = await startHttpCheckFixture();
  pki = makeTestPki();
  tlsServers = await startTlsServers(pki);
});
after(async () => {
  await fx.close();
  await tlsServers.close();
  pki.remove();
});

const never = new AbortController().signal;
function checker(spy = connectSpy()) {
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' }), { connectFn: spy.fn });
  return { spy, checker: new Checker({ dialer, connector: createConnector(dialer), extraCaPem: readFileSync(pki.caFile, 'utf8') }) };
}

test('redirect chain, statuses and final URL agree with curl -sIL (HEAD) and curl -sL (GET)', async () => {
  const { checker: c } = checker();
  for (const [path, method] of [['/r1', 'HEAD'], ['/r1', 'GET'], ['/final', 'GET'], ['/loop/a', 'HEAD'], ['/nowhere', 'GET']] as const) {
    const r = await c.http({ url: fx.url(path), method }, never);
    const cu = await curlChain(fx.url(path), method === 'HEAD');
    const ours = [...r.redirects.map((h) => h.status), r.status];
    assert.deepEqual(ours, cu.statuses, `${method} ${path}`);
    assert.equal(r.redirects.length, cu.redirects, `${method} ${path}`);
    // curl's url_effective is the last URL it requested; after too many redirects, the one that redirected once more.
    assert.equal(r.final_url, cu.effectiveUrl, `${method} ${path}`);
    // curl gives up on a loop with 47 (too many redirects); we say so in `error`.
    assert.equal(cu.exitCode === 47, r.error === `stopped after ${HTTP_MAX_REDIRECTS} redirects`, `${method} ${path}: curl exit ${cu.exitCode}, error ${r.error}`);
  }
});

test('a chain of three: relative, absolute and 303 hops, then the body counted and hashed', async () => {
  const { checker: c, spy } = checker();
  const r = await c.http({ url: fx.url('/r1') }, never);
  assert.equal(r.error, null);
  assert.deepEqual(r.redirects, [
    { url: fx.url('/r1'), status: 301, location: fx.url('/r2') },
    { url: fx.url('/r2'), status: 302, location: fx.url('/r3?x=1') },
    { url: fx.url('/r3?x=1'), status: 303, location: fx.url('/final') },
  ]);
  assert.equal(r.status, 200);
  assert.equal(r.http_version, '1.1');
  assert.equal(r.ip, '127.0.0.1');
  assert.equal(r.headers['x-fixture'], 'final');
  assert.equal(r.body_bytes, Buffer.byteLength(KNOWN_BODY));
  assert.equal(r.body_sha256, createHash('sha256').update(KNOWN_BODY).digest('hex'));
  assert.equal(r.body_truncated, false);
  assert.equal(r.tls, null);
  assert.equal(r.timings.tls, null);
  for (const k of ['dns', 'connect', 'ttfb', 'total', 'redirect'] as const) assert.equal(typeof r.timings[k], 'number', k);
  assert.ok(r.timings.dns! <= r.timings.connect! && r.timings.connect! <= r.timings.ttfb!, JSON.stringify(r.timings));
  // One connection per hop, each to the checked address.
  assert.deepEqual(spy.hosts(), ['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1']);

  const head = await c.http({ url: fx.url('/final'), method: 'HEAD' }, never);
  assert.equal(head.status, 200);
  assert.equal(head.body_bytes, 0);

  const stay = await c.http({ url: fx.url('/r1'), follow_redirects: false }, never);
  assert.deepEqual([stay.status, stay.redirects, stay.final_url, stay.headers.location, stay.error], [301, [], fx.url('/r1'), '/r2', null]);
});

test('a redirect to a forbidden address is refused by the policy: the dialer never connects there', async () => {
  const { checker: c, spy } = checker();
  const r = await c.http({ url: fx.url('/to-forbidden') }, never);
  assert.match(String(r.error), /^redirect refused: target 10\.0\.0\.1 resolves to 10\.0\.0\.1, which is in the blocked private range/);
  assert.deepEqual(r.redirects, [{ url: fx.url('/to-forbidden'), status: 302, location: 'http://10.0.0.1/' }]);
  assert.equal(r.status, null);
  assert.deepEqual(spy.hosts(), ['127.0.0.1']);

  const ftp = await c.http({ url: fx.url('/to-ftp') }, never);
  assert.match(String(ftp.error), /^redirect to ftp:\/\/127\.0\.0\.1\/ not followed: the URL must be an http/);
  assert.equal(ftp.status, 302);

  // The first target forbidden is the request's 403 (TargetForbiddenError), before any connect.
  const strict = connectSpy();
  const dialer = createDialer(loadConfig({ NETDIAG_DNS_SERVERS: '127.0.0.1:1' }), { connectFn: strict.fn });
  await assert.rejects(new Checker({ dialer, connector: createConnector(dialer) }).http({ url: fx.url('/final') }, never), TargetForbiddenError);
  assert.equal(strict.calls.length, 0);
});

test('a redirect loop stops after 10 redirects', async () => {
  const { checker: c, spy } = checker();
  const r = await c.http({ url: fx.url('/loop/a') }, never);
  assert.equal(r.redirects.length, HTTP_MAX_REDIRECTS);
  assert.equal(r.error, 'stopped after 10 redirects');
  assert.equal(r.status, 302);
  assert.equal(spy.calls.length, HTTP_MAX_REDIRECTS + 1);
});

test('hostile servers: an endless body stops at 1 MiB, a huge head is refused, a silent one times out', async () => {
  const { checker: c } = checker();
  const endless = await c.http({ url: fx.url('/endless') }, never);
  assert.equal(endless.error, null);
  assert.equal(endless.status, 200);
  assert.equal(endless.body_bytes, HTTP_MAX_BODY_BYTES);
  assert.equal(endless.body_truncated, true);
  assert.equal(endless.body_sha256, endlessSha256(HTTP_MAX_BODY_BYTES));
  // The connection is dropped, not drained.
  await eventually(() => fx.endlessClosed() === 1, { what: 'the endless body connection closed' });

  const huge = await c.http({ url: `http://127.0.0.1:${fx.hugeHeadPort}/` }, never);
  assert.equal(huge.error, `response head larger than ${HTTP_MAX_HEADER_BYTES} bytes`);
  assert.equal(huge.status, null);
  assert.deepEqual(huge.headers, {});

  const silent = await c.http({ url: `http://127.0.0.1:${fx.silentPort}/`, timeout: 1 }, never);
  assert.equal(silent.error, 'timed out after 1 s waiting for the response head');
  assert.equal(silent.status, null);
  assert.equal(silent.ip, '127.0.0.1');
  assert.equal(typeof silent.timings.connect, 'number');
  assert.equal(silent.timings.ttfb, null);
});

test('https: TLS over the dialer socket with the trust store; a bad certificate ends the check with its reason', async () => {
  const { checker: c } = checker();
  const good = await c.http({ url: `https://127.0.0.1:${tlsServers.ports.good}/` }, never);
  assert.equal(good.error, null);
  assert.equal(good.status, 200);
  assert.equal(good.tls?.protocol, 'TLSv1.3');
  assert.equal(typeof good.tls?.cipher, 'string');
  assert.ok(good.timings.connect! <= good.timings.tls! && good.timings.tls! <= good.timings.ttfb!, JSON.stringify(good.timings));
  assert.equal(good.body_sha256, createHash('sha256').update('ok').digest('hex'));

  const expired = await c.http({ url: `https://127.0.0.1:${tlsServers.ports.expired}/` }, never);
  assert.equal(expired.error, 'TLS certificate not accepted (CERT_HAS_EXPIRED)');
  assert.equal(expired.status, null);
  const wrong = await c.http({ url: `https://127.0.0.1:${tlsServers.ports.wrongname}/` }, never);
  assert.equal(wrong.error, 'TLS certificate not accepted (ERR_TLS_CERT_ALTNAME_INVALID)');
});

test('bad URLs are validation errors naming the field', async () => {
  const { checker: c, spy } = checker();
  for (const url of ['not a url', 'ftp://example.com/', 'http://user:pw@127.0.0.1/', 'file:///etc/passwd', '/relative']) {
    await assert.rejects(c.http({ url }, never), (err) => err instanceof ValidationError && err.message.startsWith('url: '), url);
  }
  assert.equal(spy.calls.length, 0);
});

test("the caller's abort ends the check with its reason", async () => {
  const { checker: c } = checker();
  const ac = new AbortController();
  const pending = c.http({ url: `http://127.0.0.1:${fx.silentPort}/`, timeout: 30 }, ac.signal);
  const reason = new Error('client went away');
  setImmediate(() => ac.abort(reason));
  await assert.rejects(pending, (err) => err === reason);
});

test('a resolver that never answers: the deadline still ends the check, and the caller can abort it', { timeout: 15_000 }, () =>
  endsDespiteSilentResolver((c, timeout, signal) => c.http({ url: 'http://slow-dns.test/', timeout }, signal), 'timed out after 1 s resolving'));
