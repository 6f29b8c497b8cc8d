import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { newWebhookSecret } from '../../../src/domain/webhooks/secrets.js';
import { newWebhookId, sign, signedHeaders } from '../../../src/domain/webhooks/signing.js';

const body = JSON.stringify({ type: 'job.succeeded', timestamp: '2026-11-23T06:00:00.000Z', data: { id: 'j1', status: 'succeeded' } });
const now = () => Math.floor(Date.now() / 1000);

test('the standardwebhooks package verifies our signature', () => {
  const secret = newWebhookSecret();
  const headers = signedHeaders([secret], newWebhookId(), now(), body);
  assert.match(headers['webhook-id'], /^msg_[A-Za-z0-9_-]{22}$/);
  assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/);
  assert.deepEqual(new Webhook(secret).verify(body, { ...headers }), JSON.parse(body));
});

test('our signature equals the package\'s own for the same id, time and body', () => {
  const secret = newWebhookSecret();
  const at = now();
  assert.equal(sign(secret, 'msg_x', at, body), new Webhook(secret).sign('msg_x', new Date(at * 1000), body));
});

test('during a rotation both secrets sign: a receiver with either verifies, a stranger does not', () => {
  const current = newWebhookSecret();
  const previous = newWebhookSecret();
  const headers = signedHeaders([current, previous], newWebhookId(), now(), body);
  assert.equal(headers['webhook-signature'].split(' ').length, 2);
  assert.ok(new Webhook(current).verify(body, { ...headers }));
  assert.ok(new Webhook(previous).verify(body, { ...headers }));
  assert.throws(() => new Webhook(newWebhookSecret()).verify(body, { ...headers }));
  // A changed body fails.
  assert.throws(() => new Webhook(current).verify(body.replace('j1', 'j2'), { ...headers }));
});

test('a secret without the whsec_ prefix is refused', () => {
  assert.throws(() => sign('abc', 'msg_x', now(), body), /whsec_/);
});
