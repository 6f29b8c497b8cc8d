import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { Judge, ProxyChecker } from '../../../src/domain/proxy/index.js';
import { ALL_CHECKS } from '../../../src/domain/proxy/types.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { createConnector } from '../../../src/infra/net/connector.js';
import { loadConfig } from '../../../src/config.js';
import { EXIT_ADDRESS, startHttpProxy, startSocksProxy, startTlsTarget } from '../../fixtures/proxies.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * The checker on its own, against a judge named by hostname (as NETDIAG_JUDGE_URL would name
 * one): proxies must then resolve the judge themselves, which is SOCKS4a and SOCKS5's domain
 * address type. The judge here is a bare node:http server around the same Judge the route uses
 * (admit, then the signed echo, the payload or the signed receipt).
 */
async function judgeServer(t: import('node:test').TestContext, judge: Judge): Promise<number> {
  const server = http.createServer((req, res) => {
    const [, , nonce = '', what] = (req.url ?? '').split('/');
    const use = what === 'download' ? 'download' : what === 'upload' ? 'upload' : 'echo';
    void (async () => {
      if (!(await judge.admit(nonce, use))) return void res.writeHead(404).end();
      if (use === 'download') return void res.end(judge.downloadPayload);
      if (use === 'upload') {
        let bytes = 0;
        req.on('data', (c: Buffer) => (bytes += c.length));
        req.on('end', () => void judge.uploadReceipt(nonce, bytes).then((receipt) => res.end(JSON.stringify(receipt))));
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(await judge.echo(nonce, req.socket.remoteAddress ?? '', req.method ?? '', req.rawHeaders)));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

test('SOCKS4a and SOCKS5 reach a judge named by hostname; every check runs', async (t) => {
  const judge = new Judge();
  const port = await judgeServer(t, judge);
  const tlsTarget = await startTlsTarget();
  const socks4 = await startSocksProxy({ version: 4 });
  const socks5 = await startSocksProxy({ version: 5 });
  const elite = await startHttpProxy({ kind: 'elite' });
  t.after(() => Promise.all([tlsTarget.close(), socks4.close(), socks5.close(), elite.close()]));
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
  const checker = new ProxyChecker({ dialer, connector: createConnector(dialer), judge, judgeUrl: `http://localhost:${port}/judge`, sslTarget: { host: '127.0.0.1', port: tlsTarget.port } });
  await checker.listening({ address: '127.0.0.1', port });
  assert.deepEqual([...checker.ownAddresses.known], ['127.0.0.1'], 'learned from a direct request to the judge');

  const results = await checker.checkBulk([`socks4a://${socks4.address}`, `socks5://${socks5.address}`, elite.address]);
  assert.deepEqual(results.map((r) => [r.protocol, r.status, r.anonymity_level, r.ssl_support, r.exit_ip]), [
    ['socks4', 'working', 'elite', true, EXIT_ADDRESS],
    ['socks5', 'working', 'elite', true, EXIT_ADDRESS],
    ['http', 'working', 'elite', true, EXIT_ADDRESS],
  ]);
  for (const r of results) assert.equal(r.checks.speed?.status, 'ok', r.checks.speed?.error ?? '');
  assert.equal(judge.active, 0, 'every nonce is revoked when its check ends');

  // A job run again: the entries it stored are neither checked nor reported again.
  const reported: number[] = [];
  const again = await checker.checkBulk([`socks4a://${socks4.address}`, `socks5://${socks5.address}`, elite.address], ALL_CHECKS, undefined, (i) => reported.push(i), new Set([0, 2]));
  assert.deepEqual(reported, [1]);
  assert.deepEqual(again.map((r) => r?.protocol), [undefined, 'socks5', undefined]);
});

test('a speed test that cannot finish in time is a timeout of that step; the proxy is still working', async (t) => {
  const judge = new Judge();
  const port = await judgeServer(t, judge);
  // Each relayed request takes 200 ms: detection (8 s allowed) waits for it, a 100 ms speed test
  // cannot (it goes on over the detection's connection, so it is the requests that must be slow).
  const slow = await startHttpProxy({ kind: 'elite', relayDelayMs: 200 });
  t.after(() => slow.close());
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
  const checker = new ProxyChecker({
    dialer,
    connector: createConnector(dialer),
    judge,
    judgeUrl: `http://127.0.0.1:${port}/judge`,
    sslTarget: { host: '127.0.0.1', port: 1 },
    timeouts: { speedMs: 100 },
  });
  const r = await checker.check(slow.address, { ssl: false, anonymity: false, speed: true, location: false });
  assert.equal(r.status, 'working');
  assert.equal(r.checks.speed?.status, 'timeout');
  assert.match(r.checks.speed?.error ?? '', /did not finish within 100 ms/);
  assert.deepEqual(r.speed, { download: null, upload: null, latency: null });
});

test("the speed test goes on over the winning try's tunnel: one tunnel to the judge per check", async (t) => {
  const judge = new Judge();
  const port = await judgeServer(t, judge);
  const tlsTarget = await startTlsTarget();
  const seen: string[] = [];
  const tunnelOnly = await startHttpProxy({ kind: 'elite', connectOnly: true, seen });
  t.after(() => Promise.all([tlsTarget.close(), tunnelOnly.close()]));
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
  const checker = new ProxyChecker({ dialer, connector: createConnector(dialer), judge, judgeUrl: `http://127.0.0.1:${port}/judge`, sslTarget: { host: '127.0.0.1', port: tlsTarget.port } });
  const r = await checker.check(tunnelOnly.address, { ssl: true, anonymity: false, speed: true, location: false });
  assert.equal(r.status, 'working');
  assert.equal(r.protocol, 'https');
  assert.equal(r.ssl_support, true);
  assert.equal(r.checks.speed?.status, 'ok', r.checks.speed?.error ?? '');
  // A figure, or what a transfer too short to time says instead (issue 24: loopback is that fast).
  assert.match(r.speed?.download ?? '', /Mbps$|^too fast to measure$/);
  assert.match(r.speed?.upload ?? '', /Mbps$|^too fast to measure$/);
  assert.deepEqual(
    seen.filter((target) => target === `127.0.0.1:${port}`),
    [`127.0.0.1:${port}`],
    'the echo, the download and the upload share one CONNECT to the judge',
  );
  assert.ok(seen.includes(`127.0.0.1:${tlsTarget.port}`), 'the SSL check has its own tunnel to its target');
  assert.equal(judge.active, 0, 'every nonce is revoked when its check ends');
  // (A destroyed socket frees its slot when it has closed, a turn or two later.)
  await eventually(() => dialer.stats.active === 0, { what: 'every socket slot freed' });
  assert.equal(dialer.stats.active, 0, 'no connection outlives the check');
});
