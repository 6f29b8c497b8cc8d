import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { compose } from '../src/compose.js';
import { loadConfig } from '../src/config.js';
import type { JobQueue } from '../src/domain/jobs/queue.js';
import { tempDir } from './helpers/build.js';

test('close(): a job queue that fails to close leaves nothing open after it; its failure is reported', async (t) => {
  const config = loadConfig({ DATABASE_URL: `sqlite:${join(tempDir(t), 'netdiag.db')}`, NETDIAG_DNS_SERVERS: '127.0.0.1:1' });
  const failure = new Error('the job queue could not close');
  const jobQueue: JobQueue = {
    enqueue: async () => {},
    start() {},
    cancel: async () => {},
    close: async () => {
      throw failure;
    },
  };
  const graph = await compose(config, { logger: false, jobQueue });
  graph.start();
  await graph.store.ping();

  await assert.rejects(graph.close(), (err) => err === failure);
  // The steps after the queue's ran: the store compose opened is closed.
  await assert.rejects(graph.store.ping());
});
