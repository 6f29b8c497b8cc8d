import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createClient,
  NetdiagError,
  verifyWebhook,
  WebhookVerificationError,
  type JobEvent,
} from '../../../clients/typescript/src/index.js';
import { build } from '../../helpers/build.js';
import { eventually } from '../../helpers/eventually.js';
import { closedPort, startListener } from '../../infra/net/fixtures/connect-spy.js';
import { startReceiver } from '../../infra/webhooks/receiver.js';

/**
 * @netdiag/client's jobs against a live server on loopback: submit, stream (SSE and NDJSON),
 * wait, resuming after a dropped connection, and a webhook delivery verified.
 */

const LOOPBACK_ENV = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8,::1/128' };
/** Quick retries; a timeout far above any loopback answer, so a busy machine never makes an answer a failed attempt. */
const FAST_WEBHOOKS = { retryDelaysMs: [40, 40, 40], timeoutMs: 30_000, pollMs: 20, leaseMs: 60_000 };

async function collect(events: AsyncIterable<JobEvent>): Promise<JobEvent[]> {
  const all: JobEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}

/** Ports on loopback: one listening, the others closed, so a scan's items differ. */
async function targets(t: { after: (fn: () => Promise<void>) => void }): Promise<{ open: number; ports: number[] }> {
  const listener = await startListener('127.0.0.1');
  t.after(() => listener.close());
  const closed = [await closedPort('127.0.0.1'), await closedPort('127.0.0.1'), await closedPort('127.0.0.1')];
  return { open: listener.port, ports: [listener.port, ...closed] };
}

/**
 * A fetch whose first job stream breaks after `keep` events (SSE) or lines (NDJSON), as a
 * connection that drops does; it records the headers of every stream request.
 */
function droppingFetch(keep: number): { fetch: typeof fetch; streams: Headers[] } {
  const streams: Headers[] = [];
  const dropping: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const accept = request.headers.get('accept') ?? '';
    const isStream = accept.includes('text/event-stream') || accept.includes('application/x-ndjson');
    if (isStream) streams.push(request.headers);
    const response = await fetch(request);
    if (!isStream || streams.length > 1 || !response.body) return response;
    const separator = accept.includes('text/event-stream') ? '\n\n' : '\n';
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let text = '';
    let broken = false;
    const reader = response.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        // An error drops what is queued: it comes in the pull after the last bytes were read.
        if (broken) return controller.error(new TypeError('terminated'));
        const { done, value } = await reader.read();
        if (!done) text += decoder.decode(value, { stream: true });
        // The first `keep` events whole (after SSE's `retry:` preamble), then the connection breaks.
        const parts = text.split(separator);
        const whole = parts.filter((p) => p.includes('"seq"')).slice(0, keep);
        if (whole.length === keep || done) {
          const upTo = text.indexOf(whole[whole.length - 1] ?? '') + (whole[whole.length - 1]?.length ?? 0) + separator.length;
          controller.enqueue(encoder.encode(text.slice(0, upTo)));
          await reader.cancel();
          broken = true;
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  return { fetch: dropping, streams };
}

test('a job is submitted, streamed (its items, then the job) and awaited', async (t) => {
  const b = await build(t, { env: LOOPBACK_ENV });
  const { open, ports } = await targets(t);
  const client = createClient({ baseUrl: b.url, token: b.token });

  const job = await client.submit('/port/scan-range', { host: '127.0.0.1', ports, timeout: 2 });
  assert.match(job.id, /^job_/);
  assert.equal(job.endpoint, '/port/scan-range');
  assert.ok(['queued', 'running'].includes(job.status), job.status);

  for (const format of ['sse', 'ndjson'] as const) {
    const events = await collect(client.stream(job.id, { format }));
    const items = events.filter((e) => e.type === 'item');
    const last = events.at(-1);
    assert.equal(items.length, ports.length, format);
    assert.deepEqual(items.map((e) => e.seq), ports.map((_, i) => i + 1), `${format}: every item once, in order`);
    assert.deepEqual([...items.map((e) => e.index)].sort(), ports.map((_, i) => i));
    assert.ok(last?.type === 'job', format);
    assert.equal(last.job.id, job.id);
    assert.equal(last.job.status, 'succeeded');
    const result = last.job.result as { port: number; state: string }[];
    assert.deepEqual(result.map((r) => r.port), [...ports].sort((x, y) => x - y));
    assert.equal(result.find((r) => r.port === open)?.state, 'open');
  }

  const finished = await client.wait(job.id);
  assert.equal(finished.status, 'succeeded');
  assert.deepEqual(finished.progress, { done: ports.length, total: ports.length });
  const { data: read } = await client.request('GET', `/jobs/${job.id}`);
  assert.deepEqual(finished, read, 'wait() gives the job as GET /api/jobs/{id} does');
});

test('wait() on a job still running resolves when it finishes', async (t) => {
  const b = await build(t, { env: LOOPBACK_ENV });
  const { ports } = await targets(t);
  const client = createClient({ baseUrl: b.url, token: b.token });
  const job = await client.submit('/port/scan-range', { host: '127.0.0.1', ports });
  const [finished, streamed] = await Promise.all([client.wait(job.id), collect(client.stream(job.id))]);
  assert.ok(['succeeded'].includes(finished.status), finished.status);
  assert.deepEqual(streamed.at(-1), { type: 'job', job: finished });
});

for (const format of ['sse', 'ndjson'] as const) {
  test(`${format}: after a dropped connection the stream resumes; no item is repeated or lost`, async (t) => {
    const b = await build(t, { env: LOOPBACK_ENV });
    const { ports } = await targets(t);
    const setup = createClient({ baseUrl: b.url, token: b.token });
    const job = await setup.submit('/port/scan-range', { host: '127.0.0.1', ports });
    await setup.wait(job.id);

    const { fetch: dropping, streams } = droppingFetch(2);
    const client = createClient({ baseUrl: b.url, token: b.token, fetch: dropping });
    const events = await collect(client.stream(job.id, { format }));
    assert.equal(streams.length, 2, 'one reconnection');
    if (format === 'sse') {
      assert.equal(streams[0]!.get('last-event-id'), null);
      assert.equal(streams[1]!.get('last-event-id'), '2', 'resumed after the last item it had');
    }
    const items = events.filter((e) => e.type === 'item');
    assert.deepEqual(items.map((e) => e.seq), ports.map((_, i) => i + 1));
    assert.equal(events.at(-1)?.type, 'job');
  });
}

test('a stream of an unknown job is a NetdiagError 404, at once', async (t) => {
  const b = await build(t);
  const client = createClient({ baseUrl: b.url, token: b.token });
  const err = await collect(client.stream('job_000000000000000000000000')).catch((e: unknown) => e);
  assert.ok(err instanceof NetdiagError, String(err));
  assert.equal(err.status, 404);
  assert.equal(err.code, 'not_found');
});

test('submit with a webhookUrl: the delivery verifies with the secret, by any of its signatures; a tampered or old one does not', async (t) => {
  const b = await build(t, { env: LOOPBACK_ENV, deps: { webhookTuning: FAST_WEBHOOKS } });
  const receiver = await startReceiver((_req, res) => {
    res.writeHead(204);
    res.end();
  });
  t.after(() => receiver.close());
  const { ports } = await targets(t);
  const client = createClient({ baseUrl: b.url, token: b.token });
  const { data: before } = await client.request('GET', '/webhooks/secret');
  const oldSecret = (before as { secret: string }).secret;
  // A rotation: deliveries now carry two signatures, the new secret's and the old one's.
  const { data: rotated } = await client.request('POST', '/webhooks/secret/rotate', { body: {} });
  const newSecret = (rotated as { secret: string }).secret;
  assert.notEqual(newSecret, oldSecret);

  const job = await client.submit('/port/scan-range', { host: '127.0.0.1', ports }, { webhookUrl: `${receiver.url}/hook` });
  assert.equal(job.webhook_url, `${receiver.url}/hook`);
  const finished = await client.wait(job.id);
  await eventually(async () => receiver.received.length, (n) => n >= 1);
  const delivery = receiver.received[0]!;
  const headers = delivery.headers as Record<string, string>;
  assert.equal(headers['webhook-signature']?.split(' ').length, 2);

  for (const secret of [newSecret, oldSecret]) {
    const event = verifyWebhook(secret, headers, delivery.body);
    assert.equal(event.type, 'job.succeeded');
    assert.equal(event.data.id, job.id);
    assert.equal(event.data.status, finished.status);
  }
  assert.equal(verifyWebhook(newSecret, new Headers(headers), delivery.body).data.id, job.id, 'Headers work as a record does');

  const refused = (fn: () => unknown, why: RegExp): void => assert.throws(fn, (e: unknown) => e instanceof WebhookVerificationError && why.test(e.message));
  refused(() => verifyWebhook(newSecret, headers, delivery.body.replace('succeeded', 'failed')), /no signature/);
  refused(() => verifyWebhook(newSecret, { ...headers, 'webhook-id': 'msg_other' }, delivery.body), /no signature/);
  refused(() => verifyWebhook(`whsec_${Buffer.from('another key').toString('base64')}`, headers, delivery.body), /no signature/);
  const sent = Number(headers['webhook-timestamp']) * 1000;
  refused(() => verifyWebhook(newSecret, headers, delivery.body, { now: sent + 6 * 60_000 }), /more than 300 seconds/);
  refused(() => verifyWebhook(newSecret, headers, delivery.body, { now: sent - 6 * 60_000 }), /more than 300 seconds/);
  const { 'webhook-signature': _signature, ...unsigned } = headers;
  refused(() => verifyWebhook(newSecret, unsigned, delivery.body), /no webhook-signature/);
});
