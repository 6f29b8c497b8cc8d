import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { PREVIOUS_SECRET_MS, WebhookSecrets } from '../../src/domain/webhooks/secrets.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { createWebhooks } from '../../src/infra/webhooks/index.js';
import { build } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { finishedJob } from '../infra/webhooks/suite.js';
import { eventually } from '../helpers/eventually.js';
import { startReceiver, status } from '../infra/webhooks/receiver.js';

interface SecretBody {
  success: true;
  data: { secret: string; created_at: string; previous_valid_until: string | null };
  message: string;
}

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

test('GET /api/webhooks/secret makes the secret on first read and answers the same one after', async (t) => {
  const b = await build(t);
  const first = await b.api('/api/webhooks/secret');
  assert.equal(first.status, 200);
  const a = (await first.json()) as SecretBody;
  await assertMatchesOpenApi(b.app, 'GET', '/api/webhooks/secret', 200, a);
  assert.match(a.data.secret, SECRET);
  assert.equal(a.data.previous_valid_until, null);
  assert.ok(Math.abs(Date.parse(a.data.created_at) - Date.now()) < 10_000);
  const again = (await (await b.api('/api/webhooks/secret')).json()) as SecretBody;
  assert.deepEqual(again.data, a.data);
});

test('the secret routes need a token', async (t) => {
  const b = await build(t);
  assert.equal((await b.api('/api/webhooks/secret', { token: null })).status, 401);
  assert.equal((await b.api('/api/webhooks/secret/rotate', { method: 'POST', token: null })).status, 401);
});

test('rotate makes a new secret; for 24 hours deliveries carry both signatures and each verifies', async (t) => {
  const b = await build(t);
  const before = ((await (await b.api('/api/webhooks/secret')).json()) as SecretBody).data;
  const res = await b.api('/api/webhooks/secret/rotate', { method: 'POST' });
  assert.equal(res.status, 200);
  const rotated = (await res.json()) as SecretBody;
  await assertMatchesOpenApi(b.app, 'POST', '/api/webhooks/secret/rotate', 200, rotated);
  assert.match(rotated.data.secret, SECRET);
  assert.notEqual(rotated.data.secret, before.secret);
  const until = Date.parse(rotated.data.previous_valid_until ?? '');
  assert.ok(Math.abs(until - (Date.now() + PREVIOUS_SECRET_MS)) < 10_000, rotated.data.previous_valid_until ?? 'null');
  const now = ((await (await b.api('/api/webhooks/secret')).json()) as SecretBody).data;
  assert.equal(now.secret, rotated.data.secret);
  assert.equal(now.previous_valid_until, rotated.data.previous_valid_until);

  // A delivery to this account now: both secrets sign, a receiver holding either verifies.
  const receiver = await startReceiver(status(200));
  t.after(() => receiver.close());
  const secrets = new WebhookSecrets(b.store);
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] });
  const { delivery, queue } = createWebhooks({ store: b.store, dialer, secrets, tuning: { pollMs: 20 } });
  t.after(() => queue.close());
  const accountId = (await b.store.accounts.findByEmail('tester@example.com'))!.id;
  const job = finishedJob(receiver.url);
  await delivery.finished(job, accountId);
  await eventually(async () => receiver.received.length, (n) => n === 1);
  const got = receiver.received[0]!;
  const headers = got.headers as Record<string, string>;
  assert.equal(headers['webhook-signature']!.split(' ').length, 2);
  assert.ok(new Webhook(before.secret).verify(got.body, headers));
  assert.ok(new Webhook(rotated.data.secret).verify(got.body, headers));

  // After the overlap only the new secret signs.
  const stored = await secrets.get(accountId);
  assert.deepEqual(secrets.signingSecrets(stored, until - 1), [rotated.data.secret, before.secret]);
  assert.deepEqual(secrets.signingSecrets(stored, until + 1), [rotated.data.secret]);
});

test('rotating an account that never read its secret makes one, with nothing before it; a {} body is accepted too', async (t) => {
  const b = await build(t);
  const rotated = (await (await b.api('/api/webhooks/secret/rotate', { method: 'POST' })).json()) as SecretBody;
  assert.match(rotated.data.secret, SECRET);
  assert.equal(rotated.data.previous_valid_until, null);
  const again = await b.api('/api/webhooks/secret/rotate', { json: {} });
  assert.equal(again.status, 200);
  const body = (await again.json()) as SecretBody;
  assert.notEqual(body.data.secret, rotated.data.secret);
  assert.ok(body.data.previous_valid_until);
});
