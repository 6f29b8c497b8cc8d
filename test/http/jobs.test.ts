import { sqliteBackend } from '../infra/store/backends.js';
import { jobEngineSuite } from './jobs-suite.js';

// PostgreSQL's run is test/http/jobs-postgres.test.ts: a file each, so the two run side by side.
jobEngineSuite({ name: 'embedded, sqlite', backend: sqliteBackend });
