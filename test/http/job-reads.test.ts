import assert from 'node:assert/strict';
import http from 'node:http';
import { test, type TestContext } from 'node:test';
import { RESULT_PIECE_ITEMS, batchOf } from '../../src/domain/jobs/items.js';
import { RESULT_IS_ITEMS, type JobOperation } from '../../src/domain/jobs/service.js';
import type { JobView } from '../../src/domain/jobs/types.js';
import { JobViews } from '../../src/domain/jobs/views.js';
import { JOB_JSON_STREAM_ITEMS } from '../../src/http/job-reads.js';
import { PAGE_RESULT_ITEMS, resultCsv } from '../../src/http/pages/checks.js';
import { build, type Built } from '../helpers/build.js';
import { eventually } from '../helpers/eventually.js';
import { PASSWORD, PageClient, setPassword } from './pages/browserless.js';

/**
 * Issue 38: a finished job's JSON, NDJSON, SSE, CSV and page are written from its stored batches
 * piece by piece. What they say is what they said when each was built whole: the items in input
 * order, the same envelope; the streams carry an ETag, and a finished job's ETag in If-None-Match
 * is a 304; a client that goes away stops the reading.
 */

const EMAIL = 'tester@example.com';

interface PortItem {
  host: string;
  ip: string;
  port: number;
  open: boolean;
  state: string;
  service: string | null;
  response_time: number | null;
  pad?: string;
}

/**
 * A finished port scan of `total` items written straight into the store as a run writes them:
 * batches of 1 to 97 items, completed out of input order (every 7th port answers late, in
 * reverse). `pad` makes each item that many characters longer.
 */
async function finishedScan(b: Built, total: number, pad = 0): Promise<{ id: string; batches: number }> {
  const account = (await b.store.accounts.findByEmail(EMAIL))!;
  const id = `job_${'R'.repeat(12)}${String(total).padStart(12, '0')}`;
  const now = Date.now();
  const at = new Date(now).toISOString();
  await b.store.jobs.create({ id, account_id: account.id, endpoint: '/port/scan-range', body: JSON.stringify({ host: '127.0.0.1', ports: `1-${total}` }), webhook_url: null, progress_total: total, created_at: at });
  assert.ok(await b.store.jobs.claim(id, 'test', now, now + 60_000, at));
  const order = Array.from({ length: total }, (_, i) => i).filter((i) => i % 7 !== 3);
  order.push(...Array.from({ length: total }, (_, i) => i).filter((i) => i % 7 === 3).reverse());
  const item = (index: number): PortItem => ({
    host: '127.0.0.1',
    ip: '127.0.0.1',
    port: index + 1,
    open: index % 500 === 21,
    state: index % 500 === 21 ? 'open' : 'closed',
    service: index % 500 === 21 ? 'ssh' : null,
    response_time: index % 3,
    ...(pad > 0 ? { pad: 'x'.repeat(pad) } : {}),
  });
  const items = order.map((index, i) => ({ seq: i + 1, index, item: JSON.stringify(item(index)) }));
  let batches = 0;
  for (let from = 0, size = 1; from < items.length; from += size, size = (size % 97) + 1) {
    const batch = batchOf(items.slice(from, from + size));
    const last = from + size >= items.length;
    if (last) {
      assert.ok(await b.store.jobs.finish(id, 'test', { status: 'succeeded', result: null, error: null, finished_at: new Date(now + 1).toISOString(), progress_done: total }, batch));
    } else {
      assert.ok(await b.store.jobs.addItems(id, 'test', batch, batch.last_seq));
    }
    batches++;
  }
  return { id, batches };
}

async function app(t: TestContext): Promise<Built> {
  const b = await build(t);
  await setPassword(b.store, EMAIL, PASSWORD);
  return b;
}

/** The job as it was built whole before (JobViews.view: its result parsed from all its items at once). */
async function wholeView(b: Built, id: string): Promise<JobView> {
  const operation: JobOperation = { items: () => 0, run: async () => RESULT_IS_ITEMS };
  const views = new JobViews({ repo: b.store.jobs, operations: (endpoint) => (endpoint === '/port/scan-range' ? operation : undefined) });
  return views.view((await b.store.jobs.find(id))!);
}

test("a finished job of many batches out of order: JSON, NDJSON, SSE, CSV and the JSON download say what the whole job says, items in input order", async (t) => {
  const b = await app(t);
  const total = JOB_JSON_STREAM_ITEMS + 3 * RESULT_PIECE_ITEMS + 17;
  const { id, batches } = await finishedScan(b, total);
  assert.ok(batches > 40);
  const view = await wholeView(b, id);
  assert.deepEqual((view.result as PortItem[]).map((p) => p.port), Array.from({ length: total }, (_, i) => i + 1), 'the whole view is in input order');

  // The API's JSON: streamed (no Content-Length), the envelope of every answer.
  const json = await b.api(`/api/jobs/${id}`);
  assert.equal(json.status, 200);
  assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(json.headers.get('content-length'), null, 'a result past JOB_JSON_STREAM_ITEMS is streamed');
  assert.deepEqual(await json.json(), { success: true, data: view, message: `job succeeded: ${total} of ${total} done` });

  // NDJSON: the items as stored (completion order), then the finished job.
  const ndjson = await b.api(`/api/jobs/${id}`, { headers: { accept: 'application/x-ndjson' } });
  const lines = (await ndjson.text()).trimEnd().split('\n');
  assert.equal(lines.length, total + 1);
  const items = lines.slice(0, -1).map((l) => JSON.parse(l) as { seq: number; index: number; item: PortItem });
  assert.deepEqual(items.map((i) => i.seq), Array.from({ length: total }, (_, i) => i + 1));
  assert.deepEqual(items.map((i) => i.item).sort((x, y) => x.port - y.port), view.result);
  assert.deepEqual(JSON.parse(lines.at(-1)!), view);

  // SSE: the same, as events.
  const sse = await (await b.api(`/api/jobs/${id}`, { headers: { accept: 'text/event-stream' } })).text();
  const events = sse.split('\n\n').filter((e) => e.startsWith('id: ') || e.startsWith('event: job'));
  assert.equal(events.length, total + 1);
  assert.match(events[0]!, /^id: 1\nevent: item\ndata: \{"seq":1,/);
  assert.deepEqual(JSON.parse(events.at(-1)!.replace(/^event: job\ndata: /, '')), view);

  // The dashboard's downloads: the CSV exactly as resultCsv made it of the whole result.
  const c = new PageClient(b.url);
  await c.signIn(EMAIL, PASSWORD);
  const csv = await c.get(`/jobs/${id}/csv`);
  assert.equal(csv.status, 200);
  assert.equal(csv.html, resultCsv(view.result));
  const download = await c.get(`/jobs/${id}/json`);
  assert.deepEqual(JSON.parse(download.html), view);
});

test('the streams carry an ETag; a finished job whose ETag matches is a 304 for each kind, a changed one is not', async (t) => {
  const b = await app(t);
  const { id } = await finishedScan(b, 2 * RESULT_PIECE_ITEMS + 1);
  const tags = new Map<string, string>();
  for (const accept of ['application/json', 'application/x-ndjson', 'text/event-stream']) {
    // Uncompressed: a compressed answer's tag is the weak form of the same (test/http/compression.test.ts).
    const plain = { accept, 'accept-encoding': 'identity' };
    const res = await b.api(`/api/jobs/${id}`, { headers: plain });
    await res.arrayBuffer();
    const etag = res.headers.get('etag');
    assert.ok(etag && /^"[\w-]+"$/.test(etag), `${accept}: a strong ETag for a finished job (${etag})`);
    tags.set(accept, etag);
    const again = await b.api(`/api/jobs/${id}`, { headers: { ...plain, 'if-none-match': etag } });
    assert.equal(again.status, 304, accept);
    assert.equal(again.headers.get('etag'), etag);
    assert.equal(await again.text(), '');
    assert.equal((await b.api(`/api/jobs/${id}`, { headers: { accept, 'if-none-match': '"other"' } })).status, 200);
  }
  assert.equal(new Set(tags.values()).size, 3, 'each representation has its own tag');
  // An SSE stream that resumes is another body: its own tag.
  const resumed = await b.api(`/api/jobs/${id}`, { headers: { accept: 'text/event-stream', 'last-event-id': '5' } });
  await resumed.arrayBuffer();
  assert.notEqual(resumed.headers.get('etag'), tags.get('text/event-stream'));
});

test("a running job's stream carries a weak ETag and is never a 304", async (t) => {
  const b = await app(t);
  const account = (await b.store.accounts.findByEmail(EMAIL))!;
  const id = `job_${'W'.repeat(24)}`;
  const now = Date.now();
  const at = new Date(now).toISOString();
  // Running elsewhere: claimed by another process, whose lease holds for the whole test.
  await b.store.jobs.create({ id, account_id: account.id, endpoint: '/port/scan-range', body: '{}', webhook_url: null, progress_total: 3, created_at: at });
  assert.ok(await b.store.jobs.claim(id, 'elsewhere', now, now + 60_000, at));
  assert.ok(await b.store.jobs.addItems(id, 'elsewhere', batchOf([{ seq: 1, index: 1, item: '{"port":2}' }]), 1));
  const stream = await b.api(`/api/jobs/${id}`, { headers: { accept: 'application/x-ndjson' } });
  const etag = stream.headers.get('etag');
  assert.ok(etag?.startsWith('W/"'), `a weak ETag: ${etag}`);
  await stream.body!.cancel();
  const again = await b.api(`/api/jobs/${id}`, { headers: { accept: 'application/x-ndjson', 'if-none-match': etag! } });
  assert.equal(again.status, 200);
  await again.body!.cancel();
  // The JSON answer of a running job keeps its 304 while unchanged.
  const json = await b.api(`/api/jobs/${id}`);
  const tag = json.headers.get('etag')!;
  assert.deepEqual(((await json.json()) as { data: JobView }).data.result, [{ port: 2 }]);
  assert.equal((await b.api(`/api/jobs/${id}`, { headers: { 'if-none-match': tag } })).status, 304);
  assert.ok(await b.store.jobs.addItems(id, 'elsewhere', batchOf([{ seq: 2, index: 0, item: '{"port":1}' }]), 2));
  assert.equal((await b.api(`/api/jobs/${id}`, { headers: { 'if-none-match': tag } })).status, 200, 'a new item changes the tag');
});

test('a client that goes away in the middle of a big JSON answer stops its reading: no more batches are read for it', async (t) => {
  const b = await app(t);
  // Some 20 MB: more than the sockets between server and client hold, so the server is still
  // writing (waiting for them to drain) when the client goes.
  const total = 40 * RESULT_PIECE_ITEMS;
  const { id } = await finishedScan(b, total, 400);
  let reads = 0;
  const itemBatches = b.store.jobs.itemBatches.bind(b.store.jobs);
  b.store.jobs.itemBatches = (...args) => {
    reads++;
    return itemBatches(...args);
  };
  // Connections to the app: each request below is its own, closed with its answer.
  const connections = () => new Promise<number>((resolve, reject) => b.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  const get = (onResponse: (res: http.IncomingMessage, req: http.ClientRequest) => void) =>
    new Promise<void>((resolve, reject) => {
      const req = http.get(`${b.url}/api/jobs/${id}`, { agent: false, headers: { authorization: `Bearer ${b.token}` } }, (res) => onResponse(res, req));
      req.once('close', resolve);
      req.once('error', (err) => (req.destroyed ? resolve() : reject(err)));
    });
  // A whole read, for how many reads the whole takes.
  await get((res) => res.resume());
  const whole = reads;
  await eventually(async () => (await connections()) === 0, { what: 'the first connection to close' });
  reads = 0;
  // Then a client that takes the first bytes and goes.
  await get((res, req) => res.once('data', () => req.destroy()));
  await eventually(async () => (await connections()) === 0, { what: 'the server to see the client go' });
  // Past the turns in which a reader still under way would go on (it reads in every turn or two,
  // src/domain/jobs/items.ts): none reads any more.
  const stopped = reads;
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(reads, stopped);
  assert.ok(stopped < whole, `the reading stopped early: ${stopped} of the ${whole} reads a whole answer takes`);
});

test("the job page of a big result shows its first items and says where the rest is; a small one's is whole; the list reads none", async (t) => {
  const b = await app(t);
  const total = PAGE_RESULT_ITEMS * 3 + 5;
  const { id } = await finishedScan(b, total);
  const c = new PageClient(b.url);
  await c.signIn(EMAIL, PASSWORD);
  const page = await c.get(`/jobs/${id}`);
  assert.equal(page.status, 200);
  assert.match(page.html, /Showing the first 1,000 of 3,005 ports: download the whole result as <a href="\/jobs\/job_\w+\/json" download>JSON<\/a> or <a href="\/jobs\/job_\w+\/csv" download>CSV<\/a>/);
  assert.match(page.html, /3005 scanned; of the first 1000: 2 open, 998 closed, 0 filtered/);
  assert.match(page.html, /The first 1000 ports/);
  // Ports past the first thousand are the download's, not the page's.
  assert.match(page.html, /<strong>1000<\/strong>/);
  assert.doesNotMatch(page.html, /<strong>1001<\/strong>/);
  assert.doesNotMatch(page.html, /id="result-json"/);

  // The list of jobs shows no result, and reads none.
  let reads = 0;
  const itemBatches = b.store.jobs.itemBatches.bind(b.store.jobs);
  b.store.jobs.itemBatches = (...args) => {
    reads++;
    return itemBatches(...args);
  };
  const list = await c.get('/jobs');
  assert.equal(list.status, 200);
  assert.match(list.html, new RegExp(id));
  assert.equal(reads, 0, 'the list read no item of any job');
  b.store.jobs.itemBatches = itemBatches;

  const small = await finishedScan(b, 40);
  const whole = await c.get(`/jobs/${small.id}`);
  assert.doesNotMatch(whole.html, /Showing the first/);
  assert.match(whole.html, /Every port \(40\)/);
  assert.match(whole.html, /id="result-json"/);
});
