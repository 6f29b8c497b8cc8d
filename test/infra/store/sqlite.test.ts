import { sqliteBackend } from './backends.js';
import { storeSuite } from './suite.js';

storeSuite(sqliteBackend);
