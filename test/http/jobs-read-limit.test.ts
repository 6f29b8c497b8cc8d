import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JOB_READS_PER_ACCOUNT_PER_SECOND, JOB_READS_PER_SECOND, JobReadCounter, jobReadsDetails } from '../../src/http/routes/jobs.js';

test('job reads: 10 a second per job, and per account a bound over ever new ids; each second starts over', () => {
  const reads = new JobReadCounter();
  const t0 = 1_000_000;
  for (let i = 0; i < JOB_READS_PER_SECOND; i++) assert.equal(reads.take(1, 'job_a', t0), null);
  assert.equal(reads.take(1, 'job_a', t0 + 999), 'job');
  assert.equal(reads.take(2, 'job_a', t0), null, "another account's count");
  let refused = 0;
  for (let i = 0; i < 1000; i++) if (reads.take(1, `job_${i}`, t0 + 500) === 'account') refused++;
  assert.equal(refused, 1000 - (JOB_READS_PER_ACCOUNT_PER_SECOND - JOB_READS_PER_SECOND - 1));
  assert.equal(reads.take(2, 'job_b', t0 + 500), null, 'one account over its bound does not hold another');
  assert.equal(reads.take(1, 'job_a', t0 + 1000), null, 'the next second');
});

test("a job-read 429's details give the limit that was exceeded, per job or per account, and the end of its second", () => {
  const resetAt = Date.UTC(2026, 10, 28, 3, 4, 6);
  assert.deepEqual(jobReadsDetails('job', resetAt), { limit: JOB_READS_PER_SECOND, remaining: 0, reset_at: '2026-11-28 03:04:06', window: 'job_reads', per: 'job' });
  assert.deepEqual(jobReadsDetails('account', resetAt), { limit: JOB_READS_PER_ACCOUNT_PER_SECOND, remaining: 0, reset_at: '2026-11-28 03:04:06', window: 'job_reads', per: 'account' });
});
