import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JobView } from '../../src/domain/jobs/types.js';
import { MAX_JSON_DEPTH } from '../../src/http/json-body.js';
import { build, type Built } from '../helpers/build.js';
import { finishedJob } from '../helpers/jobs.js';

/**
 * Issue 24, docs/jobs.md: a job keeps only the fields its endpoint declares
 * (unknown ones are dropped before it is stored, as a synchronous call ignores them), and a body
 * nested too deeply to store is a 400 on both paths, never a 500.
 */

const ASYNC = { prefer: 'respond-async' };
type Answer<T = unknown> = { success: boolean; data: T; error?: string; message: string; details?: { field?: string } };

async function finished(b: Built, id: string): Promise<JobView> {
  return (await finishedJob(b.api, id)).job;
}

test('a job keeps only the declared fields of its body: a 1 MB unknown field, and unknown fields inside declared objects, are not stored', async (t) => {
  const b = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const junk = 'j'.repeat(1_000_000);
  const body = { ipv6: '::1', junk, nested: { more: 'junk' } };
  const sync = await b.api('/api/ipv6/validate', { json: body });
  assert.equal(sync.status, 200, 'the synchronous call ignores unknown fields');
  const syncData = ((await sync.json()) as Answer).data;

  const created = await b.api('/api/ipv6/validate', { json: body, headers: ASYNC });
  assert.equal(created.status, 202);
  const { data: job } = (await created.json()) as Answer<JobView>;
  const done = await finished(b, job.id);
  assert.equal(done.status, 'succeeded');
  assert.deepEqual(done.result, syncData, 'the job runs what the synchronous call runs');
  const row = await b.store.jobs.find(job.id);
  assert.ok(row);
  assert.deepEqual(JSON.parse(row.body), { ipv6: '::1' }, 'the stored body has only the declared field');
  assert.ok(row.body.length < 100, `stored body is ${row.body.length} characters`);
  assert.ok(!JSON.stringify(done).includes('junk'), 'nothing of the junk in the job as read back');

  // Declared objects keep their declared fields only; declared optional fields are kept.
  const scan = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: 1, timeout: 1, extra: { deep: [1, 2, 3] } }, headers: ASYNC });
  assert.equal(scan.status, 202);
  const scanJob = ((await scan.json()) as Answer<JobView>).data;
  assert.deepEqual(JSON.parse((await b.store.jobs.find(scanJob.id))!.body), { host: '127.0.0.1', port: 1, timeout: 1 });
  await finished(b, scanJob.id);
});

test(`a body nested deeper than ${MAX_JSON_DEPTH} levels is a 400 validation_error naming the body, as a job and as a synchronous call; the server stays up`, async (t) => {
  const b = await build(t);
  const depth = 300_000;
  const deep = `{"ipv6":"::1","junk":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  for (const headers of [ASYNC, {}]) {
    const res = await b.api('/api/ipv6/validate', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: deep });
    const answer = (await res.json()) as Answer;
    assert.equal(res.status, 400, JSON.stringify(answer).slice(0, 300));
    assert.equal(answer.error, 'validation_error');
    assert.equal(answer.details?.field, 'body');
    assert.match(answer.message, new RegExp(`^body: arrays and objects nested more than ${MAX_JSON_DEPTH} levels deep`));
  }
  // Just at the bound: accepted (and its unknown field dropped from the job).
  const atBound = `{"ipv6":"::1","junk":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`;
  const ok = await b.api('/api/ipv6/validate', { method: 'POST', headers: { 'content-type': 'application/json', ...ASYNC }, body: atBound });
  assert.equal(ok.status, 202);
  const job = ((await ok.json()) as Answer<JobView>).data;
  assert.equal((await finished(b, job.id)).status, 'succeeded');
  // Brackets inside strings are text, not nesting.
  const inString = await b.api('/api/ipv6/validate', { json: { ipv6: '['.repeat(10_000) } });
  assert.equal(inString.status, 200);
  const alive = await b.api('/api/user');
  assert.equal(alive.status, 200, 'the server still answers');
});
