import { TEST_DATABASE_URL, postgresBackend, sqliteBackend } from '../infra/store/backends.js';
import { jobEngineSuite } from './jobs-suite.js';

jobEngineSuite({ name: 'embedded, sqlite', backend: sqliteBackend });
if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  jobEngineSuite({ name: 'embedded, postgres', backend: () => postgresBackend(url) });
}
