import { jobsStoreSuite } from './jobs-suite.js';
import { dashboardStoreSuite } from './dashboard-suite.js';
import { sqliteBackend } from './backends.js';
import { storeSuite } from './suite.js';
import { usageWindowsSuite } from './usage-windows-suite.js';

storeSuite(sqliteBackend);
usageWindowsSuite(sqliteBackend);
dashboardStoreSuite(sqliteBackend);
jobsStoreSuite(sqliteBackend);
