import { jobsStoreSuite } from './jobs-suite.js';
import { dashboardStoreSuite } from './dashboard-suite.js';
import { test } from 'node:test';
import { TEST_DATABASE_URL, postgresBackend } from './backends.js';
import { storeSuite } from './suite.js';
import { usageWindowsSuite } from './usage-windows-suite.js';

if (!TEST_DATABASE_URL) {
  test('postgres store: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  storeSuite(() => postgresBackend(url));
  usageWindowsSuite(() => postgresBackend(url));
  dashboardStoreSuite(() => postgresBackend(url));
  jobsStoreSuite(() => postgresBackend(url));
}
