import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { defaultJudgeUrl, Judge, JudgeTarget, OwnAddresses, parseEcho } from '../../../src/domain/proxy/index.js';

test('a nonce is accepted from issue until revoked or expired, and never when malformed or unknown', () => {
  let now = 1_000;
  const judge = new Judge({ ttlMs: 100, now: () => now, downloadBytes: 16 });
  const a = judge.issue();
  const b = judge.issue();
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, b);
  assert.ok(judge.accepts(a) && judge.accepts(b));
  judge.revoke(a);
  assert.equal(judge.accepts(a), false, 'revoked when its check ends');
  now += 100;
  assert.equal(judge.accepts(b), false, 'expired');
  assert.equal(judge.accepts('0123456789abcdef0123456789abcdef'), false, 'never issued');
  assert.equal(judge.accepts('../../etc'), false);
  assert.equal(judge.active, 0);
  assert.equal(judge.downloadPayload.length, 16);
});

test('the echo keeps every header in order and spells IPv4-mapped peers as IPv4', () => {
  const echo = new Judge({ downloadBytes: 1 }).echo('n', '::ffff:127.0.0.2', 'GET', ['Host', 'x', 'Via', '1.1 a', 'Via', '1.1 b']);
  assert.deepEqual(echo, { nonce: 'n', remote_address: '127.0.0.2', method: 'GET', headers: [['Host', 'x'], ['Via', '1.1 a'], ['Via', '1.1 b']] });
  assert.deepEqual(parseEcho(Buffer.from(JSON.stringify(echo)), 'n'), echo);
  assert.equal(parseEcho(Buffer.from(JSON.stringify(echo)), 'other'), null, 'an echo for another nonce is not ours');
  assert.equal(parseEcho(Buffer.from('<html>'), 'n'), null);
});

test('the default judge URL: the bound address, or a public interface address for a wildcard listener', () => {
  assert.equal(defaultJudgeUrl({ address: '127.0.0.1', port: 8080 }), 'http://127.0.0.1:8080/judge');
  assert.equal(defaultJudgeUrl({ address: '::1', port: 8080 }), 'http://[::1]:8080/judge');
  const nic = (address: string, internal = false) => ({ address, internal, family: address.includes(':') ? 'IPv6' : 'IPv4', netmask: '', mac: '', cidr: null }) as never;
  assert.equal(defaultJudgeUrl({ address: '0.0.0.0', port: 80 }, { lo: [nic('127.0.0.1', true)], eth0: [nic('10.0.0.5'), nic('93.184.216.34')] }), 'http://93.184.216.34:80/judge');
  assert.equal(defaultJudgeUrl({ address: '0.0.0.0', port: 80 }, { eth0: [nic('10.0.0.5')] }), 'http://10.0.0.5:80/judge');
  assert.equal(defaultJudgeUrl({ address: '0.0.0.0', port: 80 }, { lo: [nic('127.0.0.1', true)] }), 'http://127.0.0.1:80/judge');
  const t = new JudgeTarget('https://judge.example/netdiag/judge/');
  assert.equal(t.absolute('abc', '/download'), 'https://judge.example/netdiag/judge/abc/download');
  assert.equal(t.path('abc'), '/netdiag/judge/abc');
  assert.equal(t.port, 443);
});

test('our own address is learned from a direct request to the judge; unknown without a judge', async (t) => {
  const judge = new Judge({ downloadBytes: 1 });
  const none = new OwnAddresses({ judge: () => null, nonces: judge });
  assert.equal((await none.get()).size, 0);
  assert.match(none.error!, /no judge URL/);

  // A real judge answering on loopback, as the /judge route does.
  const server = http.createServer((req, res) => {
    const nonce = req.url!.split('/').pop()!;
    if (!judge.accepts(nonce)) return void res.writeHead(404).end();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(judge.echo(nonce, req.socket.remoteAddress!, req.method!, req.rawHeaders)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const target = new JudgeTarget(`http://127.0.0.1:${(server.address() as AddressInfo).port}/judge`);
  const own = new OwnAddresses({ judge: () => target, nonces: judge });
  assert.deepEqual([...(await own.get())], ['127.0.0.1']);
  assert.equal(own.error, null);
  assert.equal(judge.active, 0, 'the nonce of the direct request is revoked');
});
