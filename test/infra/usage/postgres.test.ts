import { test } from 'node:test';
import { TEST_DATABASE_URL, postgresBackend } from '../store/backends.js';
import { usageBackendOf, usageRecorderSuite } from './suite.js';

if (!TEST_DATABASE_URL) {
  test('postgres usage recorder: skipped because TEST_DATABASE_URL is unset (.ci/run sets it)', { skip: 'TEST_DATABASE_URL is unset' }, () => {});
} else {
  const url = TEST_DATABASE_URL;
  usageRecorderSuite('postgres', () => usageBackendOf(postgresBackend(url)));
}
