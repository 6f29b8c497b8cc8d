import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UsageRecord, UsageRepository } from '../../../src/domain/usage/repository.js';
import { GroupCommitRecorder } from '../../../src/infra/usage/group-commit.js';
import type { Backend } from '../store/backends.js';

export interface UsageBackend {
  /** The repository the server writes through. */
  usage: UsageRepository;
  /** A second, independent connection to the same database: what a restarted server would read. */
  reader: UsageRepository;
  /** An account id that exists in the database. */
  accountId: number;
  close(): Promise<void>;
}

/** The usage recorder's contract, run against every store backend. */
export function usageRecorderSuite(name: string, open: () => Promise<UsageBackend>): void {
  const rec = (accountId: number, day: string, endpoint: string, outcome: UsageRecord['outcome'], ms: number): UsageRecord => ({
    account_id: accountId,
    day,
    endpoint,
    outcome,
    duration_ms: ms,
  });

  test(`${name}: records aggregate per account, day and endpoint`, async (t) => {
    const b = await open();
    t.after(() => b.close());
    const a = b.accountId;
    await b.usage.record([
      rec(a, '2026-01-02', '/ip/lookup', 'successful', 2),
      rec(a, '2026-01-02', '/ip/lookup', 'failed', 4),
      rec(a, '2026-01-02', '/ip/lookup', 'rate_limited', 0.5),
      rec(a, '2026-01-02', '/dns/lookup', 'successful', 10),
      rec(a, '2026-01-03', '/ip/lookup', 'successful', 1),
    ]);
    await b.usage.record([rec(a, '2026-01-02', '/ip/lookup', 'successful', 1.5)]);
    const rows = await b.reader.rows(a, '2026-01-01', '2026-01-31');
    assert.deepEqual(
      rows.map((r) => ({ ...r, total_ms: Math.round(r.total_ms * 100) / 100 })),
      [
        { day: '2026-01-02', endpoint: '/dns/lookup', requests: 1, successful: 1, failed: 0, rate_limited: 0, total_ms: 10 },
        { day: '2026-01-02', endpoint: '/ip/lookup', requests: 4, successful: 2, failed: 1, rate_limited: 1, total_ms: 8 },
        { day: '2026-01-03', endpoint: '/ip/lookup', requests: 1, successful: 1, failed: 0, rate_limited: 0, total_ms: 1 },
      ],
    );
    assert.equal(await b.reader.callsOn(a, '2026-01-02'), 4, 'calls exclude rate_limited');
    assert.equal(await b.reader.callsOn(a, '2026-01-04'), 0);
    assert.deepEqual(await b.reader.rows(a, '2026-01-03', '2026-01-03').then((r) => r.length), 1, 'the range is inclusive');
  });

  test(`${name}: group commit writes many requests in few transactions, each durable when its promise resolves`, async (t) => {
    const b = await open();
    t.after(() => b.close());
    let transactions = 0;
    const counting: UsageRepository = {
      ...b.usage,
      record: async (records) => {
        transactions++;
        await b.usage.record(records);
      },
    };
    const recorder = new GroupCommitRecorder(counting);
    const seenAtResolve: number[] = [];
    await Promise.all(
      Array.from({ length: 300 }, (_, i) =>
        recorder.record(rec(b.accountId, '2026-02-01', '/user', 'successful', 1)).then(async () => {
          if (i % 50 === 0) seenAtResolve.push(await b.reader.callsOn(b.accountId, '2026-02-01'));
        }),
      ),
    );
    assert.equal(await b.reader.callsOn(b.accountId, '2026-02-01'), 300);
    assert.ok(transactions < 10, `300 records took ${transactions} transactions`);
    for (const seen of seenAtResolve) assert.ok(seen >= 1, 'a resolved record is visible to another connection');
  });

  test(`${name}: records of a failed write are kept and written once the store takes writes again`, async (t) => {
    const b = await open();
    t.after(() => b.close());
    let down = true;
    const warnings: string[] = [];
    const recorder = new GroupCommitRecorder(
      {
        ...b.usage,
        record: async (records) => {
          if (down) throw new Error('connect ECONNREFUSED');
          await b.usage.record(records);
        },
      },
      { warn: (_o, msg) => warnings.push(msg), info() {}, error() {} },
    );
    // Every record is answered (the response goes out) although nothing could be written.
    for (let i = 0; i < 3; i++) {
      await Promise.all([1, 2, 3].map(() => recorder.record(rec(b.accountId, '2026-01-01', '/x', 'successful', 1))));
    }
    assert.equal(recorder.pending, 9);
    assert.equal(warnings.length, 1, 'one warning per outage, not one per batch');
    down = false;
    await recorder.record(rec(b.accountId, '2026-01-01', '/x', 'failed', 1));
    await recorder.drain();
    assert.equal(recorder.pending, 0);
    assert.equal(await b.reader.callsOn(b.accountId, '2026-01-01'), 10);
  });

  test(`${name}: a record the database refuses is dropped and logged; the records around it are written`, async (t) => {
    const b = await open();
    t.after(() => b.close());
    const errors: string[] = [];
    const recorder = new GroupCommitRecorder(b.usage, { warn() {}, info() {}, error: (_o, msg) => errors.push(msg) });
    const missingAccount = b.accountId + 1_000_000;
    await Promise.all([
      recorder.record(rec(b.accountId, '2026-03-01', '/x', 'successful', 1)),
      recorder.record(rec(missingAccount, '2026-03-01', '/x', 'successful', 1)),
      recorder.record(rec(b.accountId, '2026-03-01', '/x', 'successful', 1)),
    ]);
    assert.equal(recorder.pending, 0, 'the refused record is not kept for ever');
    assert.equal(errors.length, 1);
    assert.equal(await b.reader.callsOn(b.accountId, '2026-03-01'), 2);
    await recorder.record(rec(b.accountId, '2026-03-01', '/x', 'successful', 1));
    assert.equal(await b.reader.callsOn(b.accountId, '2026-03-01'), 3, 'later records are not held behind it');
    await recorder.drain();
  });

  test(`${name}: a refused record among kept ones does not hold them once the database is back`, async (t) => {
    const b = await open();
    t.after(() => b.close());
    let down = true;
    const recorder = new GroupCommitRecorder({
      ...b.usage,
      record: async (records) => {
        if (down) throw new Error('connect ECONNREFUSED');
        await b.usage.record(records);
      },
    });
    await Promise.all([
      recorder.record(rec(b.accountId, '2026-03-02', '/x', 'successful', 1)),
      recorder.record(rec(b.accountId + 1_000_000, '2026-03-02', '/x', 'successful', 1)),
      recorder.record(rec(b.accountId, '2026-03-02', '/x', 'successful', 1)),
    ]);
    assert.equal(recorder.pending, 3);
    down = false;
    await recorder.drain();
    assert.equal(recorder.pending, 0);
    assert.equal(await b.reader.callsOn(b.accountId, '2026-03-02'), 2);
  });

  test(`${name}: a refused record in a large batch is found in a few writes, not one per record`, async (t) => {
    const b = await open();
    t.after(() => b.close());
    let writes = 0;
    const recorder = new GroupCommitRecorder({
      ...b.usage,
      record: async (records) => {
        writes++;
        await b.usage.record(records);
      },
    });
    await Promise.all(
      Array.from({ length: 256 }, (_, i) =>
        recorder.record(rec(i === 100 ? b.accountId + 1_000_000 : b.accountId, '2026-03-03', '/x', 'successful', 1)),
      ),
    );
    assert.equal(await b.reader.callsOn(b.accountId, '2026-03-03'), 255);
    assert.ok(writes <= 2 * 8 + 1, `${writes} writes`);
    await recorder.drain();
  });
}

/** A writer and an independent reader over one database of a store backend. */
export async function usageBackendOf(backend: Backend): Promise<UsageBackend> {
  const writer = await backend.open();
  const account = await writer.accounts.create({ name: 'U', email: 'u@example.com', plan: 'free', created_at: new Date().toISOString() });
  const reader = await backend.open();
  return {
    usage: writer.usage,
    reader: reader.usage,
    accountId: account.id,
    close: async () => {
      await reader.close();
      await writer.close();
      await backend.drop();
    },
  };
}
