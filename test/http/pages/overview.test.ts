import { test } from 'node:test';
import assert from 'node:assert/strict';
import { build } from '../../helpers/build.js';
import { PageClient, PASSWORD, setPassword } from './browserless.js';
import { utcDay } from '../../../src/domain/usage/service.js';
import type { UsageRecord } from '../../../src/domain/usage/repository.js';

/** The `used` figure of one rate window's card. */
function windowUsed(html: string, window: 'minute' | 'hour' | 'day'): number {
  const m = new RegExp(`id="window-${window}"[\\s\\S]*?<span data-used>([0-9,]+)</span>`).exec(html);
  assert.ok(m, `no ${window} window on the page`);
  return Number(m[1]!.replace(/,/g, ''));
}

/** The day table's row for `date`: requests, successful, failed, rate limited. */
function dayRow(html: string, date: string): { requests: number; successful: number; failed: number; rate_limited: number } {
  const cell = '<td class="num">([0-9,]+)</td>';
  const m = new RegExp(`<th scope="row">${date}</th>${cell}${cell}${cell}${cell}`).exec(html);
  assert.ok(m, `no row for ${date}`);
  const [requests, successful, failed, rate_limited] = m.slice(1).map((x) => Number(x.replace(/,/g, '')));
  return { requests: requests!, successful: successful!, failed: failed!, rate_limited: rate_limited! };
}

async function signedIn(b: { url: string; store: Parameters<typeof setPassword>[0] }, email = 'tester@example.com'): Promise<PageClient> {
  await setPassword(b.store, email, PASSWORD);
  const client = new PageClient(b.url);
  await client.signIn(email, PASSWORD);
  return client;
}

async function apiCallsUsed(b: { api: (p: string) => Promise<Response> }): Promise<number> {
  const res = await b.api('/api/user');
  assert.equal(res.status, 200);
  return ((await res.json()) as { data: { api_calls_used: number } }).data.api_calls_used;
}

test('overview: not signed in is sent to the login, for the page and the export', async (t) => {
  const b = await build(t);
  const client = new PageClient(b.url);
  const res = await client.get('/');
  assert.equal(res.status, 303);
  assert.equal(res.headers.get('location'), '/login?next=%2F');
  const exp = await client.get('/usage/export?format=csv&days=30');
  assert.equal(exp.status, 303);
  assert.equal(exp.headers.get('location'), `/login?next=${encodeURIComponent('/usage/export?format=csv&days=30')}`);
});

test('overview: after N API calls the day window shows N, as /api/user does, and today has N successful', async (t) => {
  const b = await build(t);
  const client = await signedIn(b);
  const n = 4;
  let used = 0;
  for (let i = 0; i < n; i++) used = await apiCallsUsed(b);
  assert.equal(used, n);
  const page = await client.get('/');
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(windowUsed(page.html, 'day'), n);
  assert.equal(windowUsed(page.html, 'minute'), n);
  assert.equal(windowUsed(page.html, 'hour'), n);
  assert.deepEqual(dayRow(page.html, utcDay(Date.now())), { requests: n, successful: n, failed: 0, rate_limited: 0 });
  assert.match(page.html, /Tester · tester@example\.com · plan <strong>enterprise<\/strong>/);
  assert.match(page.html, /<th scope="row"><code>\/user<\/code><\/th><td class="num">4<\/td>/);
  assert.match(page.html, /aria-current="page">Overview/);
  // Thirty days in the table, the chart drawn on the server, labelled, no inline style.
  assert.equal((page.html.match(/<tr><th scope="row">\d{4}-\d\d-\d\d<\/th>/g) ?? []).length, 30);
  assert.match(page.html, /<svg class="chart"[^>]* role="img" aria-label="Requests per UTC day from [^"]*: 4 in all, 4 successful/);
  assert.match(page.html, /<rect class="ok" /);
  assert.doesNotMatch(page.html, /style=|<script>|\son[a-z]+=/i);
  assert.doesNotMatch(page.html, /class="banner"/);
  // Looking at the page is not a call: the next API call is the (N+1)th.
  await client.get('/');
  assert.equal(await apiCallsUsed(b), n + 1);
});

test('overview: a 429 shows as rate limited and does not count in the windows', async (t) => {
  const b = await build(t, { plan: 'free' });
  const client = await signedIn(b);
  const statuses: number[] = [];
  for (let i = 0; i < 11; i++) statuses.push((await b.api('/api/user')).status);
  assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
  const page = await client.get('/');
  assert.equal(windowUsed(page.html, 'minute'), 10);
  assert.equal(windowUsed(page.html, 'day'), 10);
  assert.deepEqual(dayRow(page.html, utcDay(Date.now())), { requests: 11, successful: 10, failed: 0, rate_limited: 1 });
  assert.match(page.html, /<rect class="limited" /);
});

test('overview: the banner appears at 80% of the day and not below', async (t) => {
  const b = await build(t, { plan: 'free' }); // 500 calls a day
  const client = await signedIn(b);
  const account = (await b.store.accounts.findByEmail('tester@example.com'))!;
  const calls = (count: number): UsageRecord[] =>
    Array.from({ length: count }, () => ({ account_id: account.id, day: utcDay(Date.now()), endpoint: '/ip/lookup', outcome: 'successful' as const, duration_ms: 3 }));
  await b.store.usage.record(calls(399));
  const below = await client.get('/');
  assert.equal(windowUsed(below.html, 'day'), 399);
  assert.doesNotMatch(below.html, /class="banner"/);
  await b.store.usage.record(calls(1));
  const at = await client.get('/');
  assert.equal(windowUsed(at.html, 'day'), 400);
  const banner = /<p class="banner" role="status">([\s\S]*?)<\/p>/.exec(at.html);
  assert.ok(banner, 'no banner at 400 of 500');
  assert.match(banner[1]!, /100 calls are left until the day resets at <time datetime="\d{4}-\d\d-\d\dT00:00:00\.000Z">\d{4}-\d\d-\d\d 00:00:00 UTC<\/time>/);
  // The limiter, once it has counted, agrees with the records: the API's next call is the 401st.
  assert.equal(await apiCallsUsed(b), 401);
  assert.equal(windowUsed((await client.get('/')).html, 'day'), 401);
});

test('overview: the export answers what /api/usage/export answers, CSV and JSON', async (t) => {
  const b = await build(t);
  const client = await signedIn(b);
  for (let i = 0; i < 3; i++) await b.api('/api/user');
  await b.api('/api/ipv6/expand', { json: { ipv6: '2001:db8::1' } });
  const csv = await client.get('/usage/export?format=csv&days=30');
  const json = await client.get('/usage/export?format=json&days=30');
  const apiCsv = await b.api('/api/usage/export?format=csv&days=30');
  assert.equal(csv.status, 200);
  assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
  assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="netdiag-usage-\d{4}-\d\d-\d\d\.csv"$/);
  assert.equal(csv.headers.get('content-disposition'), apiCsv.headers.get('content-disposition'));
  assert.equal(csv.html, await apiCsv.text());
  assert.match(csv.html, /^date,endpoint,requests,successful,failed,rate_limited,avg_response_time\r\n/);
  const apiJson = await b.api('/api/usage/export?format=json&days=30');
  assert.equal(json.status, 200);
  assert.match(json.headers.get('content-type') ?? '', /^application\/json/);
  // The API's JSON export has the API's CSV export in today's rows; the page's was before it.
  const mine = JSON.parse(json.html) as { success: boolean; data: { endpoint: string }[]; message: string };
  const theirs = (await apiJson.json()) as typeof mine;
  assert.deepEqual(mine, { ...theirs, data: theirs.data.filter((r) => r.endpoint !== '/usage/export') });
  assert.equal(mine.success, true);
  assert.equal(mine.message, 'usage of the last 30 days per endpoint');
  // The page's export links are these routes.
  const page = await client.get('/');
  assert.match(page.html, /href="\/usage\/export\?format=csv&amp;days=30"/);
  assert.match(page.html, /href="\/usage\/export\?format=json&amp;days=30"/);
});

test('overview: bad export values are a 400 page', async (t) => {
  const b = await build(t);
  const client = await signedIn(b);
  for (const query of ['days=0', 'days=366', 'days=abc', 'days=1e2', 'days=-1', 'days=30&days=31', 'format=xml', 'format=csv&days=%00']) {
    const res = await client.get(`/usage/export?${query}`);
    assert.equal(res.status, 400, query);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/, query);
    assert.match(res.html, /<h1>Not possible<\/h1>/, query);
  }
  assert.equal((await client.get('/usage/export?days=365&format=CSV')).status, 200);
  assert.equal((await client.get('/usage/export')).status, 200);
});

test("overview: another account never sees the first one's figures", async (t) => {
  const b = await build(t);
  await b.accounts.createAccount({ email: 'other@example.com', name: 'Other', plan: 'basic' });
  for (let i = 0; i < 5; i++) await b.api('/api/user');
  const other = await signedIn(b, 'other@example.com');
  const page = await other.get('/');
  assert.equal(page.status, 200);
  assert.equal(windowUsed(page.html, 'day'), 0);
  assert.deepEqual(dayRow(page.html, utcDay(Date.now())), { requests: 0, successful: 0, failed: 0, rate_limited: 0 });
  assert.doesNotMatch(page.html, /tester@example\.com|<code>\/user<\/code>/);
  assert.match(page.html, /No calls in the last 30 days yet/);
  const csv = await other.get('/usage/export?format=csv');
  assert.equal(csv.html, 'date,endpoint,requests,successful,failed,rate_limited,avg_response_time\r\n');
  const json = JSON.parse((await other.get('/usage/export?format=json')).html) as { data: unknown[] };
  assert.deepEqual(json.data, []);
  // The first account still sees its own.
  const first = await signedIn(b);
  assert.equal(windowUsed((await first.get('/')).html, 'day'), 5);
});

test('overview: earlier days and endpoints from the records, most calls first', async (t) => {
  const b = await build(t);
  const client = await signedIn(b);
  const account = (await b.store.accounts.findByEmail('tester@example.com'))!;
  const yesterday = utcDay(Date.now() - 86_400_000);
  const old = utcDay(Date.now() - 40 * 86_400_000);
  const rec = (day: string, endpoint: string, outcome: UsageRecord['outcome'], count: number): UsageRecord[] =>
    Array.from({ length: count }, () => ({ account_id: account.id, day, endpoint, outcome, duration_ms: 10 }));
  await b.store.usage.record([
    ...rec(yesterday, '/dns/lookup', 'successful', 7),
    ...rec(yesterday, '/dns/lookup', 'failed', 2),
    ...rec(yesterday, '/ip/lookup', 'successful', 3),
    ...rec(yesterday, '/ip/lookup', 'rate_limited', 4),
    ...rec(old, '/port/scan', 'successful', 50), // beyond the 30 days
  ]);
  const page = await client.get('/');
  assert.deepEqual(dayRow(page.html, yesterday), { requests: 16, successful: 10, failed: 2, rate_limited: 4 });
  assert.doesNotMatch(page.html, new RegExp(`<th scope="row">${old}</th>|/port/scan`));
  const endpoints = [...page.html.matchAll(/<th scope="row"><code>([^<]+)<\/code><\/th><td class="num">(\d+)<\/td>/g)].map((m) => [m[1], Number(m[2])]);
  assert.deepEqual(endpoints, [['/dns/lookup', 9], ['/ip/lookup', 3]]);
  assert.match(page.html, /aria-label="Requests per UTC day [^"]*16 in all, 10 successful, 2 failed, 4 rate limited; busiest day \d{4}-\d\d-\d\d with 16\./);
});

test('overview: without a rate limiter the windows come from the recorded calls', async (t) => {
  const b = await build(t, { plan: 'free', deps: { limiter: null } });
  const client = await signedIn(b);
  const account = (await b.store.accounts.findByEmail('tester@example.com'))!;
  const now = Date.now();
  const rec = (at: number | undefined, outcome: UsageRecord['outcome']): UsageRecord => ({ account_id: account.id, day: utcDay(now), endpoint: '/ip/lookup', outcome, duration_ms: 1, ...(at === undefined ? {} : { at }) });
  await b.store.usage.record([rec(now, 'successful'), rec(now, 'failed'), rec(now, 'rate_limited'), rec(undefined, 'successful'), rec(undefined, 'successful')]);
  const page = await client.get('/');
  assert.equal(page.status, 200);
  // A 429 is not a call; a record without `at` counts in its day only.
  // (Unless the page was rendered in the next minute or hour than the records'.)
  if (Math.floor(Date.now() / 60_000) === Math.floor(now / 60_000)) assert.equal(windowUsed(page.html, 'minute'), 2);
  if (Math.floor(Date.now() / 3_600_000) === Math.floor(now / 3_600_000)) assert.equal(windowUsed(page.html, 'hour'), 2);
  assert.equal(windowUsed(page.html, 'day'), 4);
  assert.match(page.html, /<span data-used>4<\/span> <span class="of">\/ 500<\/span>/);
});
