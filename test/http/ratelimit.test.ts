import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';

/** A clock the test moves by hand. */
function testClock(start: number) {
  const clock = { now: start, fn: () => new Date(clock.now) };
  return clock;
}

test('50 concurrent requests from a free account: exactly 10 admitted, 40 × 429 with the body and headers of docs/api.md', async (t) => {
  const clock = testClock(Date.UTC(2026, 5, 1, 12, 30, 15));
  const { api, app } = await build(t, { plan: 'free', deps: { clock: clock.fn } });
  const responses = await Promise.all(Array.from({ length: 50 }, () => api('/api/user')));
  const ok = responses.filter((r) => r.status === 200);
  const limited = responses.filter((r) => r.status === 429);
  assert.equal(ok.length, 10);
  assert.equal(limited.length, 40);
  const minuteEnd = Date.UTC(2026, 5, 1, 12, 31, 0) / 1000;
  for (const r of limited) {
    const body = (await r.json()) as { success: boolean; error: string; message: string; details: Record<string, unknown> };
    assert.equal(body.success, false);
    assert.equal(body.error, 'rate_limit_exceeded');
    assert.match(body.message, /free plan/);
    assert.match(body.message, /10 requests per minute/);
    assert.deepEqual(body.details, { limit: 10, remaining: 0, reset_at: '2026-06-01 12:31:00', window: 'minute' });
    assert.equal(r.headers.get('x-ratelimit-limit'), '10');
    assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
    assert.equal(r.headers.get('x-ratelimit-reset'), String(minuteEnd));
    assert.equal(r.headers.get('ratelimit-policy'), '10;w=60, 100;w=3600, 500;w=86400');
    assert.equal(r.headers.get('retry-after'), '45');
    await assertMatchesOpenApi(app, 'GET', '/api/user', 429, body);
  }
  const remaining = ok.map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
  assert.deepEqual(remaining, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  for (const r of ok) {
    assert.equal(r.headers.get('retry-after'), null, 'Retry-After only on 429');
    assert.equal(r.headers.get('x-ratelimit-limit'), '10');
  }
  // the next minute admits again
  clock.now = Date.UTC(2026, 5, 1, 12, 31, 0);
  assert.equal((await api('/api/user')).status, 200);
});

test('the hour and then the day window bite when the minute one does not', async (t) => {
  const clock = testClock(Date.UTC(2026, 5, 1, 10, 0, 0));
  const { api } = await build(t, { plan: 'free', deps: { clock: clock.fn } });
  let admitted = 0;
  // 10 a minute for 11 minutes: the hour's 100 run out in the 11th
  for (let minute = 0; minute < 11; minute++) {
    clock.now = Date.UTC(2026, 5, 1, 10, minute, 0);
    for (let i = 0; i < 10; i++) if ((await api('/api/user')).status === 200) admitted++;
  }
  assert.equal(admitted, 100);
  clock.now = Date.UTC(2026, 5, 1, 10, 30, 0);
  const hourly = await api('/api/user');
  assert.equal(hourly.status, 429);
  const body = (await hourly.json()) as { message: string; details: { window: string; reset_at: string; limit: number } };
  assert.equal(body.details.window, 'hour');
  assert.equal(body.details.limit, 10, 'details.limit is the per-minute maximum');
  assert.equal(body.details.reset_at, '2026-06-01 11:00:00');
  assert.match(body.message, /100 requests per hour/);
  assert.equal(hourly.headers.get('x-ratelimit-limit'), '100');
  assert.equal(hourly.headers.get('x-ratelimit-reset'), String(Date.UTC(2026, 5, 1, 11, 0, 0) / 1000), 'the same instant as reset_at');
  assert.equal(hourly.headers.get('retry-after'), String(30 * 60));

  // four more hours of 100 reach the day's 500
  for (let hour = 11; hour < 15; hour++) {
    for (let minute = 0; minute < 10; minute++) {
      clock.now = Date.UTC(2026, 5, 1, hour, minute, 0);
      for (let i = 0; i < 10; i++) if ((await api('/api/user')).status === 200) admitted++;
    }
  }
  assert.equal(admitted, 500);
  clock.now = Date.UTC(2026, 5, 1, 20, 0, 0);
  const daily = await api('/api/user');
  assert.equal(daily.status, 429);
  const dayBody = (await daily.json()) as { details: { window: string; reset_at: string } };
  assert.equal(dayBody.details.window, 'day');
  assert.equal(dayBody.details.reset_at, '2026-06-02 00:00:00');
  assert.equal(daily.headers.get('retry-after'), String(4 * 3600));
  clock.now = Date.UTC(2026, 5, 2, 0, 0, 1);
  assert.equal((await api('/api/user')).status, 200);
});

test('rate-limit headers on 401, 404 and 400 responses; anonymous clients are limited per IP at the free figures', async (t) => {
  const { api } = await build(t, { plan: 'pro' });
  const notFound = await api('/api/nope');
  assert.equal(notFound.status, 404);
  assert.equal(notFound.headers.get('x-ratelimit-limit'), '60');
  assert.equal(notFound.headers.get('ratelimit-policy'), '60;w=60, 1000;w=3600, 10000;w=86400');
  const badQuery = await api('/api/usage/history?days=0');
  assert.equal(badQuery.status, 400);
  assert.equal(badQuery.headers.get('x-ratelimit-remaining'), '58');

  const unauthorized = await Promise.all(Array.from({ length: 12 }, () => api('/api/user', { token: null })));
  const statuses = unauthorized.map((r) => r.status).sort();
  assert.deepEqual(statuses, [...Array(10).fill(401), 429, 429]);
  for (const r of unauthorized) {
    assert.equal(r.headers.get('x-ratelimit-limit'), '10');
    assert.equal(r.headers.get('ratelimit-policy'), '10;w=60, 100;w=3600, 500;w=86400');
    assert.ok(r.headers.get('x-ratelimit-reset'));
  }
  // guessing tokens spends the same per-IP budget
  const guess = await api('/api/user', { token: `nd_${'x'.repeat(40)}` });
  assert.equal(guess.status, 429);
  assert.match(((await guess.json()) as { message: string }).message, /without a valid API token/);
  // while the real account keeps its own budget
  assert.equal((await api('/api/user')).status, 200);
});

test('a 429 is not a call but shows as rate_limited in stats and history', async (t) => {
  const clock = testClock(Date.UTC(2026, 5, 1, 8, 0, 0));
  const { api, app } = await build(t, { plan: 'free', deps: { clock: clock.fn } });
  for (let i = 0; i < 8; i++) await api('/api/user');
  await api('/api/nope'); // a call too: failed
  for (let i = 0; i < 4; i++) assert.equal((await api('/api/user')).status, i === 0 ? 200 : 429);
  clock.now += 60_000;
  const stats = await api('/api/usage/stats');
  assert.equal(stats.status, 200);
  const body = (await stats.json()) as { data: Record<string, any> };
  await assertMatchesOpenApi(app, 'GET', '/api/usage/stats', 200, body);
  const d = body.data;
  assert.equal(d.plan, 'free');
  assert.equal(d.api_calls_limit, 500);
  // 9 /user + 1 404 + this stats request = 11 calls; 3 refused
  assert.equal(d.api_calls_used, 11);
  assert.deepEqual(d.today, { requests: 14, successful: 10, failed: 1, rate_limited: 3 });
  assert.deepEqual(d.by_endpoint, { '/user': 9, '(unmatched)': 1, '/usage/stats': 1 });
  assert.deepEqual(d.windows.minute, { limit: 10, used: 1, remaining: 9, reset_at: '2026-06-01 08:02:00' });
  assert.deepEqual(d.windows.hour, { limit: 100, used: 11, remaining: 89, reset_at: '2026-06-01 09:00:00' });
  assert.deepEqual(d.windows.day, { limit: 500, used: 11, remaining: 489, reset_at: '2026-06-02 00:00:00' });

  const user = (await (await api('/api/user')).json()) as { data: { api_calls_used: number } };
  assert.equal(user.data.api_calls_used, 12, 'GET /user counts the calls of the UTC day, itself included');

  const history = (await (await api('/api/usage/history?days=3')).json()) as { data: Array<Record<string, unknown>> };
  assert.deepEqual(history.data, [
    { date: '2026-05-30', requests: 0, successful: 0, failed: 0, rate_limited: 0 },
    { date: '2026-05-31', requests: 0, successful: 0, failed: 0, rate_limited: 0 },
    // history reports what is recorded: everything before this request
    { date: '2026-06-01', requests: 15, successful: 11, failed: 1, rate_limited: 3 },
  ]);
});

test('history: every day present, oldest first, default 30; bad days or format → 400', async (t) => {
  const clock = testClock(Date.UTC(2026, 0, 2, 23, 59, 0));
  const { api, app } = await build(t, { deps: { clock: clock.fn } });
  await api('/api/user');
  clock.now = Date.UTC(2026, 0, 5, 0, 0, 0);
  await api('/api/user');
  const res = await api('/api/usage/history');
  const body = (await res.json()) as { data: Array<{ date: string; requests: number }> };
  await assertMatchesOpenApi(app, 'GET', '/api/usage/history', 200, body);
  assert.equal(body.data.length, 30);
  assert.equal(body.data[0]!.date, '2025-12-07');
  assert.equal(body.data[29]!.date, '2026-01-05');
  const dates = body.data.map((d) => d.date);
  assert.deepEqual([...dates].sort(), dates);
  assert.deepEqual(body.data.filter((d) => d.requests > 0).map((d) => [d.date, d.requests]), [['2026-01-02', 1], ['2026-01-05', 1]]);
  assert.equal(((await (await api('/api/usage/history?days=365')).json()) as { data: unknown[] }).data.length, 365);
  assert.equal(((await (await api('/api/usage/history?days=1')).json()) as { data: unknown[] }).data.length, 1);

  for (const q of ['days=0', 'days=366', 'days=abc', 'days=1.5', 'days=-3', 'days=', 'days=1e3']) {
    const r = await api(`/api/usage/history?${q}`);
    assert.equal(r.status, 400, q);
    const e = (await r.json()) as { error: string; message: string; details: { field: string } };
    assert.equal(e.error, 'validation_error', q);
    assert.equal(e.details.field, 'days', q);
    assert.match(e.message, /^days: /, q);
  }
  // format is case-insensitive (issue 16): format=CSV is a CSV export, tested in new-user.test.ts
  for (const q of ['format=xml', 'format=', 'days=400&format=csv']) {
    const r = await api(`/api/usage/export?${q}`);
    assert.equal(r.status, 400, q);
  }
});

test('export: JSON and CSV agree row for row; CSV is an RFC 4180 attachment', async (t) => {
  const clock = testClock(Date.UTC(2026, 3, 10, 9, 0, 0));
  const { api, app } = await build(t, { deps: { clock: clock.fn } });
  await api('/api/user');
  await api('/api/user');
  await api('/api/nope');
  clock.now = Date.UTC(2026, 3, 11, 9, 0, 0);
  await api('/api/usage/stats');
  const json = await api('/api/usage/export?format=json&days=7');
  assert.equal(json.status, 200);
  const jbody = (await json.json()) as { data: Array<Record<string, string | number>> };
  await assertMatchesOpenApi(app, 'GET', '/api/usage/export', 200, jbody);
  assert.deepEqual(jbody.data.map((r) => [r.date, r.endpoint, r.requests]), [
    ['2026-04-10', '(unmatched)', 1],
    ['2026-04-10', '/user', 2],
    ['2026-04-11', '/usage/stats', 1],
  ]);
  for (const r of jbody.data) assert.equal(typeof r.avg_response_time, 'number');

  const csv = await api('/api/usage/export?format=csv&days=7');
  assert.equal(csv.status, 200);
  assert.equal(csv.headers.get('content-type'), 'text/csv; charset=utf-8');
  assert.match(csv.headers.get('content-disposition') ?? '', /^attachment; filename="netdiag-usage-2026-04-11\.csv"$/);
  const text = await csv.text();
  // the JSON export itself was recorded in between: the CSV has that one row more
  const lines = text.split('\r\n').filter((l) => l && !l.includes('/usage/export'));
  assert.match(text, /^2026-04-11,\/usage\/export,1,1,0,0,/m);
  assert.equal(lines[0], 'date,endpoint,requests,successful,failed,rate_limited,avg_response_time');
  assert.equal(lines.length, jbody.data.length + 1);
  lines.slice(1).forEach((line, i) => {
    const row = jbody.data[i]!;
    const expected = ['date', 'endpoint', 'requests', 'successful', 'failed', 'rate_limited', 'avg_response_time'].map((k) => String(row[k]));
    assert.deepEqual(line.split(','), expected);
  });
  // the default format is JSON
  assert.match((await api('/api/usage/export')).headers.get('content-type') ?? '', /application\/json/);
});

test('after a restart the in-process limiter picks the day up from the recorded usage', async (t) => {
  const clock = testClock(Date.UTC(2026, 6, 1, 9, 0, 0));
  const first = await build(t, { plan: 'free', deps: { clock: clock.fn } });
  for (let minute = 0; minute < 3; minute++) {
    clock.now = Date.UTC(2026, 6, 1, 9, minute, 0);
    for (let i = 0; i < 10; i++) assert.equal((await first.api('/api/user')).status, 200);
  }
  await first.app.close();
  // a new process over the same database: fresh memory, same store
  const { composeApp } = await import('../../src/compose-app.js');
  const second = await composeApp({ config: first.config, store: first.store, logger: false, clock: clock.fn });
  t.after(() => second.close());
  clock.now = Date.UTC(2026, 6, 1, 10, 0, 0);
  const concurrent = await Promise.all(
    Array.from({ length: 12 }, () => second.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${first.token}` } })),
  );
  assert.equal(concurrent.filter((r) => r.statusCode === 200).length, 10, 'still exact while the seed loads');
  const counts = concurrent.filter((r) => r.statusCode === 200).map((r) => r.json().data.api_calls_used).sort((a: number, b: number) => a - b);
  assert.deepEqual(counts, [31, 32, 33, 34, 35, 36, 37, 38, 39, 40], 'the 30 calls before the restart still count');
  assert.equal(concurrent[0]!.headers['ratelimit-policy'], '10;w=60, 100;w=3600, 500;w=86400');
});
