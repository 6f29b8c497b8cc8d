import { test } from 'node:test';
import { TEST_DATABASE_URL, postgresBackend } from '../store/backends.js';
import { webhookDeliverySuite } from './suite.js';

if (!TEST_DATABASE_URL) {
  test('postgres webhook delivery: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  webhookDeliverySuite('postgres', () => postgresBackend(url));
}
