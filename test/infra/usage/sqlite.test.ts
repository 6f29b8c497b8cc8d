import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { openSqliteStore } from '../../../src/infra/store/sqlite.js';
import { usageRecorderSuite } from './suite.js';

usageRecorderSuite('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-usage-'));
  const path = join(dir, 'usage.db');
  const writer = await openSqliteStore(path);
  const account = await writer.accounts.create({ name: 'U', email: 'u@example.com', plan: 'free', created_at: new Date().toISOString() });
  const reader = await openSqliteStore(path);
  return {
    usage: writer.usage,
    reader: reader.usage,
    accountId: account.id,
    close: async () => {
      await reader.close();
      await writer.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
