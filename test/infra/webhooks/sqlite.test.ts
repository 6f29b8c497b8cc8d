import { sqliteBackend } from '../store/backends.js';
import { webhookDeliverySuite } from './suite.js';

webhookDeliverySuite('sqlite', sqliteBackend);
