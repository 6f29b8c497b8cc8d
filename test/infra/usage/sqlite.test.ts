import { sqliteBackend } from '../store/backends.js';
import { usageBackendOf, usageRecorderSuite } from './suite.js';

usageRecorderSuite('sqlite', () => usageBackendOf(sqliteBackend()));
