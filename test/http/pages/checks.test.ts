import assert from 'node:assert/strict';
import net from 'node:net';
import { test, type TestContext } from 'node:test';
import { loadConfig } from '../../../src/config.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { OPERATIONS } from '../../../src/operations/index.js';
import { build, type Built } from '../../helpers/build.js';
import { eventually } from '../../helpers/eventually.js';
import { connectSpy, hangingConnect } from '../../infra/net/fixtures/connect-spy.js';
import { startDnsServer } from '../../fixtures/dns-server.js';
import { PASSWORD, PageClient, namedListeners, setPassword } from './browserless.js';

const EMAIL = 'tester@example.com';

/** A closed port: one a listener had a moment ago. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function signedIn(t: TestContext, env: Record<string, string> = {}): Promise<{ b: Built; c: PageClient; spy: ReturnType<typeof connectSpy> }> {
  const dns = await startDnsServer({ records: [{ name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' }, { name: 'example.test', type: 'MX', ttl: 600, data: { preference: 10, exchange: 'mail.example.test' } }] });
  t.after(() => dns.close());
  const spy = connectSpy();
  const cfg = { NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}`, ...env };
  const dialer = createDialer(loadConfig(cfg), { connectFn: spy.fn });
  const b = await build(t, { env: cfg, deps: { dialer } });
  await setPassword(b.store, EMAIL, PASSWORD);
  const c = new PageClient(b.url);
  await c.signIn(EMAIL, PASSWORD);
  return { b, c, spy };
}

/** The job page a check's form leads to, once its job has finished. */
async function finished(b: Built, c: PageClient, location: string): Promise<string> {
  const id = /^\/jobs\/(job_[0-9A-Za-z]+)$/.exec(location)?.[1];
  assert.ok(id, `the form leads to its job's page: ${location}`);
  await eventually(async () => ['succeeded', 'failed'].includes((await b.store.jobs.find(id))?.status ?? ''), { what: `job ${id} to finish` });
  const page = await c.get(location);
  assert.equal(page.status, 200);
  return page.html;
}

test('Checks: a form per declared operation, fields from its body schema', async (t) => {
  const { c } = await signedIn(t);
  const index = await c.get('/checks');
  assert.equal(index.status, 200);
  for (const op of OPERATIONS) assert.match(index.html, new RegExp(`href="/checks/${op.path.slice(1).replace(/\//g, '-')}"`), `${op.path} has a form`);
  const range = await c.get('/checks/port-scan-range');
  assert.match(range.html, /<input type="text" id="f-host" name="host"[^>]*maxlength="255"[^>]* required/);
  assert.match(range.html, /<input type="text" id="f-ports" name="ports"[^>]*placeholder="22,80,443"/);
  assert.match(range.html, /<input type="number" id="f-timeout" name="timeout"[^>]* min="1" max="30" placeholder="3"/);
  assert.match(range.html, /name="webhook_url"/);
  const dns = await c.get('/checks/dns-lookup');
  assert.match(dns.html, /<select id="f-type" name="type"[\s\S]*?<option value="MX">MX<\/option>/);
  const ip = await c.get('/checks/ip-lookup');
  assert.match(ip.html, /<input type="hidden" name="security_check" value="false">\s*<input type="checkbox" id="f-security_check" name="security_check" value="true"/);
  const bulk = await c.get('/checks/dns-lookup-bulk');
  assert.match(bulk.html, /<textarea id="f-domains" name="domains"/);
  assert.equal((await c.get('/checks/no-such-tool')).status, 404);
});

test('Checks: a port scan of loopback runs as the account\'s job, counted as its call; the job page names the open port', async (t) => {
  const { b, c } = await signedIn(t, { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' });
  const { port: open, service } = (await namedListeners(t, 1))[0]!;
  const closed = await closedPort();
  await c.get('/checks/port-scan-range');
  const posted = await c.post('/checks/port-scan-range', { host: '127.0.0.1', ports: `${open},${closed}`, timeout: '' });
  assert.equal(posted.status, 303, posted.html.slice(0, 500));
  const html = await finished(b, c, posted.headers.get('location')!);
  assert.match(html, /Open ports \(1\)/);
  assert.match(html, new RegExp(`<td data-label="Port" class="num">${open}</td><td data-label="Service" class="">${service}</td>`));
  assert.match(html, new RegExp(`<li class="port-closed"><strong>${closed}</strong>`));
  assert.match(html, /2 scanned: 1 open, 1 closed, 0 filtered/);
  assert.match(html, /id="result-json"/);
  // One call of /port/scan-range in the account's usage, as a token's job would be.
  const stats = (await (await b.api('/api/usage/stats')).json()) as { data: { by_endpoint: Record<string, number> } };
  assert.equal(stats.data.by_endpoint['/port/scan-range'], 1);

  const id = posted.headers.get('location')!.slice('/jobs/'.length);
  const csv = await c.get(`/jobs/${id}/csv`);
  assert.match(csv.headers.get('content-disposition') ?? '', /attachment; filename="job_/);
  assert.match(csv.html, /^host,ip,port,open,state,service,response_time,queued_ms,reason,error\n/);
  assert.match(csv.html, new RegExp(`^127\\.0\\.0\\.1,127\\.0\\.0\\.1,${open},true,open,${service},`, 'm'));
  const json = JSON.parse((await c.get(`/jobs/${id}/json`)).html) as { id: string; result: Array<{ port: number; state: string }> };
  assert.equal(json.id, id);
  assert.deepEqual(json.result.map((r) => r.state).sort(), ['closed', 'open']);

  // Run again: a new job with the same input.
  await c.get(`/jobs/${id}`);
  const again = await c.post(`/jobs/${id}/run-again`, {});
  assert.equal(again.status, 303, again.html.slice(again.html.indexOf("<main"), again.html.indexOf("<main") + 600));
  assert.notEqual(again.headers.get('location'), `/jobs/${id}`);
  assert.match(await finished(b, c, again.headers.get('location')!), /Open ports \(1\)/);
  // "Change and run": the form filled with the job's input.
  assert.match((await c.get(`/checks/port-scan-range?from=${id}`)).html, new RegExp(`name="ports" value="${open},${closed}"`));
});

test('Checks: the API\'s refusals come back on the form in its words, and nothing runs', async (t) => {
  const { b, c, spy } = await signedIn(t);
  await c.get('/checks/port-scan');
  const bad = await c.post('/checks/port-scan', { host: '127.0.0.1', port: 'eighty' });
  assert.equal(bad.status, 400);
  assert.match(bad.html, /role="alert">Port: /i);
  assert.match(bad.html, /value="eighty"/, 'the form keeps what was typed');
  // Loopback is not allowed here: a 403 before any connect.
  const forbidden = await c.post('/checks/port-scan', { host: '127.0.0.1', port: '22' });
  assert.equal(forbidden.status, 403);
  assert.match(forbidden.html, /127\.0\.0\.1/);
  assert.deepEqual(spy.calls, [], 'the dialer was never asked to connect');
  assert.equal((await b.store.jobs.list((await b.store.accounts.findByEmail(EMAIL))!.id, { limit: 10 })).length, 0, 'no job was made');
  // Without the form's CSRF token nothing is sent.
  assert.equal((await c.post('/checks/port-scan', { host: '127.0.0.1', port: '22', _csrf: '' })).status, 403);
  // The session cookie is no token: the API without one is still a 401.
  assert.equal((await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: 22 }, token: null, headers: { cookie: [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } })).status, 401);
});

test('Checks: DNS records with their TTLs, an IPv6 address written out in full, another account\'s job is a 404', async (t) => {
  const { b, c } = await signedIn(t);
  await c.get('/checks/dns-lookup');
  const dns = await c.post('/checks/dns-lookup', { domain: 'example.test', type: 'MX' });
  assert.equal(dns.status, 303, dns.html.slice(0, 500));
  const html = await finished(b, c, dns.headers.get('location')!);
  assert.match(html, /<td data-label="TTL" class="num">600 s<\/td><td data-label="Data" class=""><code>10 mail\.example\.test<\/code>/);
  assert.match(html, /NOERROR/);

  await c.get('/checks/ipv6-expand');
  const expand = await c.post('/checks/ipv6-expand', { ipv6: '2001:db8::1' });
  const expanded = await finished(b, c, expand.headers.get('location')!);
  assert.match(expanded, /<dt>Full form<\/dt><dd>2001:0db8:0000:0000:0000:0000:0000:0001<\/dd>/);

  const other = (await b.accounts.createAccount({ email: 'other@example.com', name: 'O' })).token;
  const theirs = await b.api('/api/ipv6/validate', { json: { ipv6: '::1' }, headers: { prefer: 'respond-async' }, token: other });
  const theirId = ((await theirs.json()) as { data: { id: string } }).data.id;
  for (const path of [`/jobs/${theirId}`, `/jobs/${theirId}/json`, `/jobs/${theirId}/csv`, `/jobs/${theirId}/events`]) assert.equal((await c.get(path)).status, 404, path);
  await c.get('/checks');
  assert.equal((await c.post(`/jobs/${theirId}/run-again`, {})).status, 404);
});

test('a running job\'s page: reloads itself where no script runs, streams its progress from the API\'s streams where one does', async (t) => {
  const hanging = hangingConnect();
  const dialer = createDialer(loadConfig({ NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1' }), { connectFn: hanging.fn });
  const b = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' }, deps: { dialer } });
  await setPassword(b.store, EMAIL, PASSWORD);
  const c = new PageClient(b.url);
  await c.signIn(EMAIL, PASSWORD);
  await c.get('/checks/port-scan-range');
  const posted = await c.post('/checks/port-scan-range', { host: '127.0.0.1', ports: '1-3', timeout: '30' });
  assert.equal(posted.status, 303, posted.html.slice(0, 500));
  const location = posted.headers.get('location')!;
  await eventually(() => hanging.sockets.length >= 3);
  const page = await c.get(location);
  assert.match(page.html, /<noscript><meta http-equiv="refresh" content="3"><\/noscript>/);
  assert.match(page.html, new RegExp(`data-job-events="${location}/events\\?after=0"`));
  assert.match(page.html, /action="\/jobs\/job_[0-9A-Za-z]+\/cancel"/);

  // The stream: Server-Sent Events with the session's cookie, never with nothing.
  const abort = new AbortController();
  t.after(() => abort.abort());
  const cookie = [...c.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const events = await fetch(`${b.url}${location}/events?after=0`, { headers: { cookie, accept: 'text/event-stream' }, signal: abort.signal });
  assert.equal(events.status, 200);
  assert.match(events.headers.get('content-type') ?? '', /^text\/event-stream/);
  const first = await events.body!.getReader().read();
  assert.match(new TextDecoder().decode(first.value), /^retry: 1000/);
  abort.abort();
  assert.equal((await fetch(`${b.url}${location}/events`, { redirect: 'manual' })).status, 303, 'signed out: to the login');

  // Cancelled from its page, it no longer refreshes.
  await c.get(location);
  assert.equal((await c.post(`${location}/cancel`, {})).status, 303);
  await eventually(() => hanging.sockets.every((s) => s.destroyed));
  const done = await c.get(location);
  assert.match(done.html, /job-cancelled/);
  assert.doesNotMatch(done.html, /http-equiv="refresh"/);
  assert.doesNotMatch(done.html, /data-job-events/);
});
