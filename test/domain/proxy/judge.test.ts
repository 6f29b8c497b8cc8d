import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import {
  defaultJudgeUrl,
  Judge,
  JUDGE_NONCE_TTL_MS,
  JUDGE_PURGE_GRACE_MS,
  JUDGE_PURGE_INTERVAL_MS,
  JudgeTarget,
  MemoryJudgeLedger,
  OwnAddresses,
  parseEcho,
  parseUploadReceipt,
} from '../../../src/domain/proxy/index.js';

const SECRET_A = 'a'.repeat(32);
const SECRET_B = 'b'.repeat(32);

test('a nonce grants each of its uses once, until it expires or its check revokes it', async () => {
  let now = 1_000_000;
  const judge = new Judge({ secret: SECRET_A, ttlMs: 100, now: () => now, downloadBytes: 16 });
  const a = await judge.issue();
  const b = await judge.issue();
  assert.match(a, /^[0-9a-f]{78}$/);
  assert.notEqual(a, b);
  assert.equal(judge.active, 2);
  for (const use of ['echo', 'download', 'upload'] as const) {
    assert.equal(await judge.admit(a, use), true, `the first ${use}`);
    assert.equal(await judge.admit(a, use), false, `a second ${use} is refused`);
  }
  assert.equal(await judge.admit(b, 'echo'), true);
  await judge.revoke(b);
  assert.equal(judge.active, 1);
  assert.equal(await judge.admit(b, 'download'), false, 'revoked when its check ends: its unspent uses are gone');
  assert.equal(await judge.admit(b, 'upload'), false);

  const c = await judge.issue();
  now += 100;
  assert.equal(await judge.admit(c, 'echo'), false, 'expired');
  assert.equal(judge.downloadPayload.length, 16);
});

test('replays of a spent use or of a revoked nonce are refused without asking the ledger', async () => {
  const ledger = new MemoryJudgeLedger();
  let spends = 0;
  const spend = ledger.spend.bind(ledger);
  ledger.spend = (...args) => {
    spends++;
    return spend(...args);
  };
  const judge = new Judge({ secret: SECRET_A, ledger, downloadBytes: 1 });
  const nonce = await judge.issue();
  assert.equal(await judge.admit(nonce, 'echo'), true);
  assert.equal(spends, 1);
  for (let i = 0; i < 20; i++) assert.equal(await judge.admit(nonce, 'echo'), false, 'a replayed echo');
  assert.equal(spends, 1, 'no write for a use this judge spent');
  await judge.revoke(nonce);
  const afterRevoke = spends;
  for (const use of ['echo', 'download', 'upload'] as const) assert.equal(await judge.admit(nonce, use), false, `${use} after revocation`);
  assert.equal(spends, afterRevoke, 'no write for a revoked nonce');
});

test('a nonce grants only what it was issued for, and nothing we did not make is admitted', async () => {
  const judge = new Judge({ secret: SECRET_A });
  const echoOnly = await judge.issue(['echo']);
  assert.equal(await judge.admit(echoOnly, 'download'), false, 'a check without a speed test gets no download');
  assert.equal(await judge.admit(echoOnly, 'upload'), false);
  assert.equal(await judge.admit(echoOnly, 'echo'), true);

  const genuine = await judge.issue();
  // One changed bit anywhere (the uses byte, the expiry, the id) breaks the tag.
  for (const i of [1, 5, 20, 60, 77]) {
    const forged = genuine.slice(0, i) + (genuine[i] === '0' ? '1' : '0') + genuine.slice(i + 1);
    assert.equal(await judge.admit(forged, 'echo'), false, `flipped at ${i}`);
  }
  const other = new Judge({ secret: SECRET_B });
  assert.equal(await judge.admit(await other.issue(), 'echo'), false, 'a nonce made with another key');
  for (const junk of ['0'.repeat(78), '0123456789abcdef0123456789abcdef', '../../etc', '', 'F'.repeat(78), `${genuine}0`]) {
    assert.equal(await judge.admit(junk, 'echo'), false, junk);
  }
  assert.equal(await judge.admit(genuine, 'echo'), true, 'the genuine one still works');
});

test('without NETDIAG_JUDGE_SECRET, judges sharing a ledger share the secret the first one stored', async () => {
  const ledger = new MemoryJudgeLedger();
  const one = new Judge({ ledger });
  const two = new Judge({ ledger });
  assert.deepEqual(await one.key(), await two.key());
  assert.ok((await one.key()).length >= 32);
  const nonce = await one.issue();
  assert.equal(await two.admit(nonce, 'echo'), true, 'issued by one, admitted by the other');
  assert.equal(await one.admit(nonce, 'echo'), false, 'and once only, whichever is asked');
  assert.notDeepEqual(await new Judge({ ledger: new MemoryJudgeLedger() }).key(), await one.key(), 'another database, another secret');
  assert.deepEqual(await new Judge({ ledger, secret: SECRET_A }).key(), Buffer.from(SECRET_A), 'a configured secret wins');
});

test('the echo keeps every header in order, spells IPv4-mapped peers as IPv4, and is believed only when signed by our key', async () => {
  const judge = new Judge({ secret: SECRET_A, downloadBytes: 1 });
  const key = await judge.key();
  const nonce = await judge.issue();
  const signed = await judge.echo(nonce, '::ffff:127.0.0.2', 'GET', ['Host', 'x', 'Via', '1.1 a', 'Via', '1.1 b']);
  const { signature, ...echo } = signed;
  assert.deepEqual(echo, { nonce, remote_address: '127.0.0.2', method: 'GET', headers: [['Host', 'x'], ['Via', '1.1 a'], ['Via', '1.1 b']] });
  assert.match(signature, /^[0-9a-f]{64}$/);
  const body = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
  assert.deepEqual(parseEcho(body(signed), nonce, key), echo);

  // What a proxy could do to the answer on its way back: every one of them is not an echo.
  const tampered: Array<[string, unknown]> = [
    ['another sender', { ...signed, remote_address: '203.0.113.7' }],
    ['a header dropped', { ...signed, headers: signed.headers.slice(0, 2) }],
    ['a header added', { ...signed, headers: [...signed.headers, ['X-Extra', '1']] }],
    ['a value changed', { ...signed, headers: [['Host', 'x'], ['Via', '1.1 a'], ['Via', '1.1 c']] }],
    ['a header that is not a pair', { ...signed, headers: [...signed.headers, ['Lonely']] }],
    ['no signature', echo],
    ['a signature under another key', { ...echo, signature: (await new Judge({ secret: SECRET_B }).echo(nonce, '127.0.0.2', 'GET', ['Host', 'x', 'Via', '1.1 a', 'Via', '1.1 b'])).signature }],
    ['a signature that is not hex', { ...signed, signature: 'zz'.repeat(32) }],
    ['a short signature', { ...signed, signature: signature.slice(0, 32) }],
  ];
  for (const [what, value] of tampered) assert.equal(parseEcho(body(value), nonce, key), null, what);
  assert.equal(parseEcho(body(signed), await judge.issue(), key), null, 'an echo for another nonce is not ours');
  assert.equal(parseEcho(Buffer.from('<html>'), nonce, key), null);
});

test('the upload receipt is believed only when the judge signed that count for that nonce', async () => {
  const judge = new Judge({ secret: SECRET_A });
  const key = await judge.key();
  const nonce = await judge.issue();
  const receipt = await judge.uploadReceipt(nonce, 1234);
  const body = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));
  assert.equal(parseUploadReceipt(body(receipt), nonce, key), 1234);
  assert.equal(parseUploadReceipt(body({ ...receipt, bytes: 4321 }), nonce, key), null, 'another count');
  assert.equal(parseUploadReceipt(body({ bytes: 1234 }), nonce, key), null, 'unsigned');
  assert.equal(parseUploadReceipt(body(receipt), await judge.issue(), key), null, 'another nonce');
  assert.equal(parseUploadReceipt(Buffer.from('{"bytes":1234'), nonce, key), null);
});

test('spent uses of expired nonces are purged now and then, after a grace for clocks that run behind', async () => {
  let now = 10_000_000;
  const purges: number[] = [];
  const ledger = new (class extends MemoryJudgeLedger {
    override async purge(before: number): Promise<number> {
      purges.push(before);
      return super.purge(before);
    }
  })();
  const judge = new Judge({ ledger, secret: SECRET_A, now: () => now });
  await judge.admit(await judge.issue(), 'echo');
  assert.deepEqual(purges, [], 'not before the interval');
  now += JUDGE_PURGE_INTERVAL_MS;
  await judge.admit(await judge.issue(), 'echo');
  await judge.admit(await judge.issue(), 'echo');
  assert.deepEqual(purges, [now - JUDGE_PURGE_GRACE_MS], 'once per interval');
  assert.ok(JUDGE_PURGE_GRACE_MS > 0 && JUDGE_NONCE_TTL_MS > 0);
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

/** A judge on loopback, as the /judge route serves it; `forge` answers with an unsigned echo instead. */
async function echoServer(t: TestContext, judge: Judge, opts: { forge?: boolean; seen?: string[] } = {}): Promise<JudgeTarget> {
  const server = http.createServer((req, res) => {
    const nonce = req.url!.split('/').pop()!;
    opts.seen?.push(nonce);
    void (async () => {
      if (!(await judge.admit(nonce, 'echo'))) return void res.writeHead(404).end();
      const { signature, ...echo } = await judge.echo(nonce, req.socket.remoteAddress!, req.method!, req.rawHeaders);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(opts.forge ? { ...echo, remote_address: '198.51.100.1' } : { ...echo, signature }));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  return new JudgeTarget(`http://127.0.0.1:${(server.address() as AddressInfo).port}/judge`);
}

test('our own address is learned from a direct, signed echo on a nonce of its own; unknown without a judge', async (t) => {
  const judge = new Judge({ secret: SECRET_A, downloadBytes: 1 });
  const none = new OwnAddresses({ judge: () => null, nonces: judge });
  assert.equal((await none.get()).size, 0);
  assert.match(none.error!, /no judge URL/);

  const seen: string[] = [];
  const target = await echoServer(t, judge, { seen });
  const own = new OwnAddresses({ judge: () => target, nonces: judge });
  assert.deepEqual([...(await own.get())], ['127.0.0.1']);
  assert.equal(own.error, null);
  assert.equal(judge.active, 0, 'the nonce of the direct request is revoked');
  assert.equal(seen.length, 1);
  for (const use of ['echo', 'download', 'upload'] as const) assert.equal(await judge.admit(seen[0]!, use), false, `its nonce grants no further ${use}`);
});

test('an echo that is not signed with our key teaches us no address', async (t) => {
  const judge = new Judge({ secret: SECRET_A, downloadBytes: 1 });
  const target = await echoServer(t, judge, { forge: true });
  const own = new OwnAddresses({ judge: () => target, nonces: judge });
  assert.equal((await own.get()).size, 0);
  assert.match(own.error!, /not signed with our judge key/);
});
