import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { Checker, type TlsCheckResult } from '../../../src/domain/checks/index.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { createConnector } from '../../../src/infra/net/connector.js';
import { loadConfig } from '../../../src/config.js';
import { TargetForbiddenError } from '../../../src/errors.js';
import { connectSpy, closedPort, startListener } from '../../infra/net/fixtures/connect-spy.js';
import { CASES, makeTestPki, startTlsServers, type TestPki, type TlsServers } from '../../fixtures/tls-pki.js';
import { sClient, VERIFY_CODES, x509 } from './openssl.js';
import { endsDespiteSilentResolver } from './silent-resolver.js';

let pki: TestPki;
let servers: TlsServers;
before(async () => {
  pki = makeTestPki();
  servers = await startTlsServers(pki);
});
after(async () => {
  await servers.close();
  pki.remove();
});

const checkerFor = (allow = '127.0.0.0/8', spy?: ReturnType<typeof connectSpy>) => {
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: allow, NETDIAG_DNS_SERVERS: '127.0.0.1:1' }), spy ? { connectFn: spy.fn } : {});
  return new Checker({ dialer, connector: createConnector(dialer), extraCaPem: readFileSync(pki.caFile, 'utf8') });
};
const never = new AbortController().signal;

test('each fixture agrees with openssl s_client and openssl x509: protocol, cipher, verdict, certificate, chain', async () => {
  const checker = checkerFor();
  for (const name of CASES) {
    const port = servers.ports[name];
    const r: TlsCheckResult = await checker.tls({ host: '127.0.0.1', port, servername: 'good.test' }, never);
    const s = await sClient(port, 'good.test', pki.caFile, 'good.test');
    assert.equal(r.error, null, name);
    assert.equal(r.ip, '127.0.0.1');
    assert.equal(r.servername, 'good.test');
    assert.equal(r.protocol, s.protocol, name);
    assert.equal(r.cipher, s.cipher, name);
    assert.equal(r.alpn, s.alpn, name);
    const expected = VERIFY_CODES[s.verifyCode];
    assert.notEqual(expected, undefined, `${name}: openssl verify code ${s.verifyCode} not mapped`);
    assert.equal(r.authorization_error, expected, name);
    assert.equal(r.authorized, s.verifyCode === 0, name);

    const leaf = await x509(s.sent[0]!);
    const cert = r.certificate!;
    assert.equal(cert.subject, leaf.subject, name);
    assert.equal(cert.issuer, leaf.issuer, name);
    assert.equal(cert.serial, leaf.serial, name);
    assert.equal(cert.not_before, leaf.notBefore, name);
    assert.equal(cert.not_after, leaf.notAfter, name);
    assert.deepEqual(cert.san, leaf.san, name);
    assert.equal(cert.fingerprint_sha256, leaf.fingerprint, name);
    assert.deepEqual(cert.key, { type: leaf.keyType, bits: leaf.keyBits }, name);
    assert.equal(cert.days_left, Math.floor((Date.parse(leaf.notAfter) - Date.now()) / 86_400_000), name);
    // The chain starts with what the server sent, in its order.
    for (const [i, pem] of s.sent.entries()) {
      const c = await x509(pem);
      assert.deepEqual(r.chain[i], { subject: c.subject, issuer: c.issuer, not_after: c.notAfter }, `${name} chain[${i}]`);
    }
  }
});

test('the verdicts: good is trusted; expired, wrong name, self-signed and incomplete are described, not refused', async () => {
  const checker = checkerFor();
  const check = (name: (typeof CASES)[number]) => checker.tls({ host: '127.0.0.1', port: servers.ports[name], servername: 'good.test' }, never);
  const good = await check('good');
  assert.equal(good.authorized, true);
  assert.equal(good.hostname_match, true);
  assert.equal(good.protocol, 'TLSv1.3');
  // Leaf, intermediate (sent), then the test root from the trust store.
  assert.deepEqual(good.chain.map((c) => c.subject), ['CN=good.test,O=netdiag tests', 'CN=netdiag Test Intermediate CA,O=netdiag tests', 'CN=netdiag Test Root CA,O=netdiag tests']);

  const expired = await check('expired');
  assert.deepEqual([expired.authorized, expired.authorization_error, expired.hostname_match], [false, 'CERT_HAS_EXPIRED', true]);
  assert.ok(expired.certificate!.days_left < -300, String(expired.certificate!.days_left));

  const wrong = await check('wrongname');
  assert.deepEqual([wrong.authorized, wrong.authorization_error, wrong.hostname_match], [false, 'ERR_TLS_CERT_ALTNAME_INVALID', false]);
  assert.equal(wrong.protocol, 'TLSv1.2');
  assert.deepEqual(wrong.certificate!.san, ['DNS:wrong.test']);

  const self = await check('selfsigned');
  assert.deepEqual([self.authorized, self.authorization_error, self.hostname_match], [false, 'DEPTH_ZERO_SELF_SIGNED_CERT', true]);
  assert.equal(self.chain.length, 1);

  const incomplete = await check('incomplete');
  assert.deepEqual([incomplete.authorized, incomplete.authorization_error, incomplete.hostname_match], [false, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', true]);
  assert.equal(incomplete.chain.length, 1);

  // Without the test CA the good server is not trusted: the trust is Node's roots plus the extra file.
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
  const bare = await new Checker({ dialer, connector: createConnector(dialer) }).tls({ host: '127.0.0.1', port: servers.ports.good, servername: 'good.test' }, never);
  assert.equal(bare.authorized, false);
  assert.equal(bare.authorization_error, 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY');
});

test('SNI defaults to the host; an IP host sends none and is checked against the address', async () => {
  const checker = checkerFor();
  const byIp = await checker.tls({ host: '127.0.0.1', port: servers.ports.good }, never);
  assert.equal(byIp.servername, null);
  // The good certificate names IP 127.0.0.1.
  assert.equal(byIp.hostname_match, true);
  assert.equal(byIp.authorized, true);
  const s = await sClient(servers.ports.good, null, pki.caFile, 'good.test');
  assert.equal(byIp.protocol, s.protocol);
  const wrong = await checker.tls({ host: '127.0.0.1', port: servers.ports.wrongname }, never);
  assert.equal(wrong.hostname_match, false);
  assert.equal(wrong.authorization_error, 'ERR_TLS_CERT_ALTNAME_INVALID');
});

test('failures are results: a closed port, a server that is not TLS, a silent one (timeout)', async (t) => {
  const checker = checkerFor();
  const closed = await checker.tls({ host: '127.0.0.1', port: await closedPort('127.0.0.1') }, never);
  assert.match(String(closed.error), /refused/);
  assert.equal(closed.certificate, null);
  assert.equal(closed.authorized, false);

  const silent = await startListener('127.0.0.1');
  t.after(() => silent.close());
  const timedOut = await checker.tls({ host: '127.0.0.1', port: silent.port, timeout: 1 }, never);
  assert.equal(timedOut.error, 'no TLS handshake within 1 s');
  assert.equal(timedOut.ip, '127.0.0.1');

  const { createServer } = await import('node:net');
  const plain = createServer((s) => s.resume().end('HTTP/1.1 400 Bad Request\r\n\r\n'));
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => plain.close(() => r())));
  const notTls = await checker.tls({ host: '127.0.0.1', port: (plain.address() as import('node:net').AddressInfo).port }, never);
  assert.equal(notTls.error, 'TLS handshake failed: wrong version number');
});

test('a forbidden host is refused before any connect', async () => {
  const spy = connectSpy();
  const checker = checkerFor('', spy);
  await assert.rejects(checker.tls({ host: '127.0.0.1', port: servers.ports.good }, never), TargetForbiddenError);
  assert.equal(spy.calls.length, 0);
});

test("the caller's abort ends the check with its reason", async (t) => {
  const silent = await startListener('127.0.0.1');
  t.after(() => silent.close());
  const ac = new AbortController();
  const pending = checkerFor().tls({ host: '127.0.0.1', port: silent.port, timeout: 30 }, ac.signal);
  const reason = new Error('client went away');
  setImmediate(() => ac.abort(reason));
  await assert.rejects(pending, (err) => err === reason);
});

test('a host name is resolved through the dialer, connected to at its checked address, and sent as SNI', async (t) => {
  const { startDnsServer } = await import('../../fixtures/dns-server.js');
  const dns = await startDnsServer({ records: [{ name: 'good.test', type: 'A', ttl: 60, data: '127.0.0.1' }] });
  t.after(() => dns.close());
  const spy = connectSpy();
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: `${dns.host}:${dns.port}` }), { connectFn: spy.fn });
  const before = servers.sni.good.length;
  const r = await new Checker({ dialer, connector: createConnector(dialer), extraCaPem: readFileSync(pki.caFile, 'utf8') }).tls({ host: 'good.test', port: servers.ports.good }, never);
  assert.equal(r.servername, 'good.test');
  assert.equal(r.authorized, true);
  assert.deepEqual(spy.hosts(), ['127.0.0.1']);
  assert.deepEqual(servers.sni.good.slice(before), ['good.test']);
});

test('a resolver that never answers: the deadline still ends the check, and the caller can abort it', { timeout: 15_000 }, () =>
  endsDespiteSilentResolver((c, timeout, signal) => c.tls({ host: 'slow-dns.test', timeout }, signal), 'no TLS handshake within 1 s'));
