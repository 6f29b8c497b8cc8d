import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { build } from '../../helpers/build.js';
import { hangingConnect } from '../../infra/net/fixtures/connect-spy.js';
import { eventually } from '../../helpers/eventually.js';
import { PASSWORD, PageClient, setPassword } from './browserless.js';
import { subjectOf } from '../../../src/http/pages/jobs.js';
import { startReceiver } from '../../infra/webhooks/receiver.js';

const EMAIL = 'tester@example.com';
const ASYNC = { prefer: 'respond-async' };

test('jobs page: the account\'s jobs with status and progress; a running one is cancelled from the page (its sockets close); a finished one is a 409', async (t) => {
  const hanging = hangingConnect();
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: hanging.fn });
  const b = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' }, deps: { dialer } });
  await setPassword(b.store, EMAIL, PASSWORD);
  const c = new PageClient(b.url);
  assert.equal((await c.get('/jobs')).status, 303, 'member page');
  await c.signIn(EMAIL, PASSWORD);
  assert.match((await c.get('/jobs')).html, /No jobs/);

  // One quick job that finishes, one scan of silent ports that runs until cancelled.
  const done = await b.api('/api/ipv6/validate', { json: { ipv6: '2001:db8::1' }, headers: ASYNC });
  assert.equal(done.status, 202);
  const doneId = ((await done.json()) as { data: { id: string } }).data.id;
  const running = await b.api('/api/port/scan-range', { json: { host: '127.0.0.1', ports: [1, 2, 3, 4, 5], timeout: 30 }, headers: ASYNC });
  assert.equal(running.status, 202);
  const runningId = ((await running.json()) as { data: { id: string } }).data.id;
  await eventually(() => hanging.sockets.length >= 5);
  await eventually(async () => (await b.store.jobs.find(doneId))?.status === 'succeeded', { what: 'the quick job to succeed' });

  const page = await c.get('/jobs');
  assert.equal(page.status, 200);
  assert.match(page.html, new RegExp(`${doneId}[\\s\\S]*?succeeded`));
  assert.match(page.html, new RegExp(`${runningId}[\\s\\S]*?running[\\s\\S]*?0 / 5`));
  // What each job checked, beside its endpoint.
  assert.match(page.html, new RegExp(`${doneId}[\\s\\S]*?<code>/ipv6/validate</code> <span class="job-subject">2001:db8::1</span>`));
  assert.match(page.html, new RegExp(`${runningId}[\\s\\S]*?<code>/port/scan-range</code> <span class="job-subject">127\\.0\\.0\\.1</span>`));
  assert.match(page.html, new RegExp(`action="/jobs/${runningId}/cancel"`));
  assert.doesNotMatch(page.html, new RegExp(`action="/jobs/${doneId}/cancel"`), 'no Cancel for a finished job');
  const onlySucceeded = await c.get('/jobs?status=succeeded');
  assert.match(onlySucceeded.html, new RegExp(doneId));
  assert.doesNotMatch(onlySucceeded.html, new RegExp(runningId));

  // Without the CSRF token nothing is cancelled.
  assert.equal((await c.post(`/jobs/${runningId}/cancel`, { _csrf: '' })).status, 403);
  assert.ok(hanging.sockets.some((s) => !s.destroyed));
  await c.get('/jobs');
  const cancelled = await c.post(`/jobs/${runningId}/cancel`, {});
  assert.equal(cancelled.status, 303);
  // Given up before the scan's 30 s timeout: sockets closed by then were closed by the cancel.
  await eventually(() => hanging.sockets.every((s) => s.destroyed), { timeoutMs: 20_000 });
  assert.ok(hanging.sockets.every((s) => s.destroyed), 'the job\'s sockets are closed by the cancel');
  assert.match((await c.get('/jobs')).html, new RegExp(`${runningId}[\\s\\S]*?cancelled`));
  await c.get('/jobs');
  const again = await c.post(`/jobs/${doneId}/cancel`, {});
  assert.equal(again.status, 409);
  assert.match(again.html, /has finished already/);

  // Another account's job is not there, and cannot be cancelled from here.
  const other = (await b.accounts.createAccount({ email: 'other@example.com', name: 'O' })).token;
  const theirs = await b.api('/api/ipv6/validate', { json: { ipv6: '::1' }, headers: ASYNC, token: other });
  const theirId = ((await theirs.json()) as { data: { id: string } }).data.id;
  assert.doesNotMatch((await c.get('/jobs')).html, new RegExp(theirId));
  assert.equal((await c.post(`/jobs/${theirId}/cancel`, {})).status, 404);
  await c.get('/jobs');
  assert.equal((await c.post(`/jobs/${'x'.repeat(300)}/cancel`, {})).status, 404);
});

test('job page: the webhook\'s attempts, a Retry-After honoured noted in its error, and the delivery rule the server follows', async (t) => {
  const receiver = await startReceiver((_req, res) => {
    res.writeHead(429, { 'retry-after': '30' });
    res.end();
  });
  t.after(() => receiver.close());
  const b = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' }, deps: { webhookTuning: { retryDelaysMs: [40], pollMs: 20 } } });
  await setPassword(b.store, EMAIL, PASSWORD);
  const c = new PageClient(b.url);
  await c.signIn(EMAIL, PASSWORD);
  const accepted = await b.api('/api/ipv6/validate', { json: { ipv6: '2001:db8::1', webhook_url: `${receiver.url}/hook` }, headers: ASYNC });
  assert.equal(accepted.status, 202);
  const id = ((await accepted.json()) as { data: { id: string } }).data.id;
  await eventually(async () => (await b.store.webhookDeliveries.attempts(id)).length, (n) => n === 1, { what: 'the first attempt recorded' });
  const page = await c.get(`/jobs/${id}`);
  assert.equal(page.status, 200);
  assert.match(page.html, /<caption>Delivery attempts<\/caption>/);
  assert.match(page.html, /data-label="Status" class="num tone-bad">429<\/td>[\s\S]*?data-label="Error">HTTP 429, Retry-After 30 s<\/td>/);
  assert.ok(
    page.html.includes('A delivery that gets no 2xx within 15 s is retried (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h, each ±10 %), never sooner than a Retry-After sent with a 429 or 503 (at most 24 h is honoured); a 410 stops the retries.'),
    'the rule docs/jobs.md states',
  );
});

test('what a job checked, in a few words: its target, a bulk call\'s count, a proxy without its password', () => {
  assert.equal(subjectOf({ host: 'example.com', ports: [80] }), 'example.com');
  assert.equal(subjectOf({ domains: ['a.test', 'b.test'] }), '2 domains');
  assert.equal(subjectOf({ ips: ['192.0.2.1'] }), '1 ip');
  assert.equal(subjectOf({ proxy: 'user:secret@203.0.113.7:8080' }), 'user:***@203.0.113.7:8080');
  assert.equal(subjectOf({ url: `https://example.com/${'a'.repeat(100)}` }).length, 60);
  assert.equal(subjectOf(null), '—');
});
