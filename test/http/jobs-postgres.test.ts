import { TEST_DATABASE_URL, postgresBackend } from '../infra/store/backends.js';
import { jobEngineSuite } from './jobs-suite.js';

if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  jobEngineSuite({ name: 'embedded, postgres', backend: () => postgresBackend(url) });
}
