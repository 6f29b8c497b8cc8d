import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PACKAGE_DIR } from '../../../src/config.js';
import type { Store } from '../../../src/domain/store.js';
import type { WebhookSecrets } from '../../../src/domain/webhooks/secrets.js';
import {
  WEBHOOK_RETRY_AFTER_MAX_MS,
  WEBHOOK_RETRY_DELAYS_MS,
  WEBHOOK_RETRY_JITTER,
  WEBHOOK_SCHEDULE_TEXT,
  WEBHOOK_TIMEOUT_MS,
  WebhookDelivery,
  type WebhookSendRequest,
  type WebhookTransport,
} from '../../../src/domain/webhooks/delivery.js';

const S = 1_000;
const MIN = 60 * S;
const H = 60 * MIN;
/** docs/jobs.md, word for word: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h. */
const API_SCHEDULE = [5 * S, 5 * MIN, 30 * MIN, 2 * H, 5 * H, 10 * H, 14 * H, 20 * H, 24 * H];
const NOW = Date.UTC(2026, 10, 28, 2, 0, 0);

/** A transport that records what it is asked to send and answers `status`. */
function recordingTransport(status: number | null): WebhookTransport & { sent: WebhookSendRequest[] } {
  const sent: WebhookSendRequest[] = [];
  return {
    sent,
    check: async () => undefined,
    send: async (req) => {
      sent.push(req);
      return { status, error: status === 200 ? null : 'no answer', duration_ms: 1 };
    },
  };
}

/** A delivery whose `next` is all that is used: no store or secrets are touched. */
function delivery(random?: () => number): WebhookDelivery {
  return new WebhookDelivery({
    store: {} as Store,
    secrets: {} as WebhookSecrets,
    transport: recordingTransport(200),
    clock: () => new Date(NOW),
    ...(random ? { random } : {}),
  });
}

test('the schedule is docs/webhooks.md\'s: nine retries after 5 s .. 24 h, ±10 %, a 15 s timeout, Retry-After honoured up to 24 h', () => {
  assert.deepEqual([...WEBHOOK_RETRY_DELAYS_MS], API_SCHEDULE);
  assert.equal(WEBHOOK_RETRY_JITTER, 0.1);
  assert.equal(WEBHOOK_TIMEOUT_MS, 15 * S);
  assert.equal(WEBHOOK_RETRY_AFTER_MAX_MS, 24 * H);
  const d = delivery();
  assert.deepEqual(d.retryDelaysMs, API_SCHEDULE);
  assert.equal(d.timeoutMs, 15 * S);
});

test('an attempt is sent with the 15 s timeout unless told otherwise', async () => {
  const transport = recordingTransport(200);
  const secrets = { get: async () => ({ secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', created_at: '' }), signingSecrets: () => ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] } as unknown as WebhookSecrets;
  const store = { webhookDeliveries: { complete: async () => true } } as unknown as Store;
  const d = new WebhookDelivery({ store, secrets, transport, clock: () => new Date(NOW) });
  assert.equal(await d.attempt({ id: 1, attempt: 1, webhook_id: 'msg_x', job_id: 'j', account_id: 1, url: 'http://192.0.2.1/', event_type: 'job.succeeded', payload: '{}' }, 'me'), true);
  assert.equal(transport.sent.length, 1);
  assert.equal(transport.sent[0]!.timeoutMs, 15_000);
});

test('each retry waits its delay of the table within ±10 %, the extremes included; after the ninth retry the event is given up', () => {
  for (const [r, share] of [
    [0, -0.1],
    [0.5, 0],
    [1 - Number.EPSILON, 0.1],
  ] as const) {
    const d = delivery(() => r);
    for (let attempt = 1; attempt <= 9; attempt++) {
      const base = API_SCHEDULE[attempt - 1]!;
      const next = d.next(attempt, { status: 500 }, NOW);
      assert.equal(next.state, 'pending');
      assert.equal((next as { next_attempt_at: number }).next_attempt_at - NOW, Math.round(base * (1 + share)), `attempt ${attempt}, random ${r}`);
    }
    assert.deepEqual(d.next(10, { status: 500 }, NOW), { state: 'failed' }, 'no tenth retry');
  }
  // Math.random itself: every draw within the band, and the band used (not one fixed point).
  const d = delivery();
  for (let attempt = 1; attempt <= 9; attempt++) {
    const base = API_SCHEDULE[attempt - 1]!;
    const waits = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const next = d.next(attempt, { status: null }, NOW) as { state: string; next_attempt_at: number };
      assert.equal(next.state, 'pending');
      const wait = next.next_attempt_at - NOW;
      assert.ok(wait >= Math.floor(base * 0.9) && wait <= Math.ceil(base * 1.1), `attempt ${attempt}: ${wait} ms`);
      waits.add(wait);
    }
    assert.ok(waits.size > 10, `attempt ${attempt}: the delays vary`);
  }
});

test('2xx is delivered, 410 stops at once; every other failure is retried', () => {
  const d = delivery(() => 0.5);
  assert.deepEqual(d.next(1, { status: 204 }, NOW), { state: 'delivered' });
  assert.deepEqual(d.next(1, { status: 410 }, NOW), { state: 'failed' });
  assert.deepEqual(d.next(1, { status: 410, retry_after: '5' }, NOW), { state: 'failed' });
  for (const status of [null, 301, 400, 404, 408, 413, 429, 500, 502, 503, 504]) {
    assert.deepEqual(d.next(1, { status }, NOW), { state: 'pending', next_attempt_at: NOW + 5_000 }, String(status));
  }
});

test('a 429 or 503 with Retry-After is retried no sooner than it asks, in either form, at most 24 h on', () => {
  const d = delivery(() => 0.5);
  const due = (status: number, retryAfter: string, attempt = 1) => (d.next(attempt, { status, retry_after: retryAfter }, NOW) as { next_attempt_at: number }).next_attempt_at - NOW;
  assert.equal(due(429, '30'), 30_000);
  assert.equal(due(503, '30'), 30_000);
  assert.equal(due(503, new Date(NOW + 2 * MIN).toUTCString()), 2 * MIN);
  assert.equal(due(429, 'Saturday, 28-Nov-26 03:00:00 GMT'), H);
  // Shorter than the schedule's own delay: the schedule's stands.
  assert.equal(due(429, '1'), 5_000);
  assert.equal(due(429, '60', 3), 30 * MIN);
  // Bounded: a year, or a date in 2099, waits 24 h.
  assert.equal(due(429, '31536000'), 24 * H);
  assert.equal(due(503, 'Thu, 01 Jan 2099 00:00:00 GMT'), 24 * H);
  // Unreadable: the schedule alone.
  assert.equal(due(429, 'in a while'), 5_000);
  assert.equal(due(429, '-30'), 5_000);
  // On the last attempt nothing follows, whatever it asks.
  assert.deepEqual(d.next(10, { status: 429, retry_after: '30' }, NOW), { state: 'failed' });
});

test('a Retry-After on any other status is ignored: the schedule alone decides', () => {
  const d = delivery(() => 0.5);
  for (const status of [301, 302, 307, 400, 404, 408, 413, 500, 502, 504]) {
    assert.deepEqual(d.next(1, { status, retry_after: '3600' }, NOW), { state: 'pending', next_attempt_at: NOW + 5_000 }, String(status));
  }
});

test('the OpenAPI webhooks text and the dashboard say the schedule docs/webhooks.md says, from the same constants', () => {
  assert.equal(
    WEBHOOK_SCHEDULE_TEXT,
    'A delivery that gets no 2xx within 15 s is retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, each ±10 %), never sooner than a `Retry-After` sent with a 429 or 503 (at most 24 h is honoured); a 410 stops the retries.',
  );
  const docs = readFileSync(join(PACKAGE_DIR, 'docs/webhooks.md'), 'utf8');
  assert.match(docs, /2xx within \*\*15 s\*\*/);
  assert.match(docs, /\| next attempt in \| 5 s \| 5 min \| 30 min \| 2 h \| 5 h \| 10 h \| 14 h \| 20 h \| 24 h \|/);
  assert.doesNotMatch(docs, /\b10 s\b/);
});
