import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JUDGE_SECRET_MIN_LENGTH, loadConfig } from '../../src/config.js';
import { Judge, parseEcho } from '../../src/domain/proxy/index.js';
import { build } from '../helpers/build.js';
import { ConfigError } from '../../src/errors.js';

const SECRET = 'k'.repeat(JUDGE_SECRET_MIN_LENGTH);

test('NETDIAG_JUDGE_SECRET: at least 32 characters, and a refusal never shows the value', () => {
  assert.equal(loadConfig({ NETDIAG_DNS_SERVERS: '127.0.0.1' }).judgeSecret, undefined);
  assert.equal(loadConfig({ NETDIAG_DNS_SERVERS: '127.0.0.1', NETDIAG_JUDGE_SECRET: `  ${SECRET}  ` }).judgeSecret, SECRET);
  assert.equal(loadConfig({ NETDIAG_DNS_SERVERS: '127.0.0.1', NETDIAG_JUDGE_SECRET: '' }).judgeSecret, undefined, 'empty is unset');
  const short = 'too-short-to-sign-with';
  assert.throws(
    () => loadConfig({ NETDIAG_DNS_SERVERS: '127.0.0.1', NETDIAG_JUDGE_SECRET: short }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^NETDIAG_JUDGE_SECRET=.*must be at least 32 characters \(got 22\)/);
      assert.ok(!err.message.includes(short), err.message);
      return true;
    },
  );
});

test('with NETDIAG_JUDGE_SECRET set, the judge signs with it: an instance elsewhere with the same secret can verify its echo', async (t) => {
  const b = await build(t, { env: { NETDIAG_JUDGE_SECRET: SECRET } });
  // The same secret and the same database, as a second instance would have them.
  const peer = new Judge({ ledger: b.store.judge, secret: SECRET });
  const nonce = await peer.issue();
  const res = await fetch(`${b.url}/judge/${nonce}`);
  assert.equal(res.status, 200);
  assert.ok(parseEcho(Buffer.from(await res.arrayBuffer()), nonce, Buffer.from(SECRET)), 'signed with the configured secret');
  const stranger = new Judge({ ledger: b.store.judge, secret: 'x'.repeat(40) });
  assert.equal((await fetch(`${b.url}/judge/${await stranger.issue()}`)).status, 404, 'a nonce made under another key is refused');
  const stored = await b.store.judge.secret('whatever');
  assert.notEqual(stored, SECRET, 'the configured secret is never written to the database');
});
