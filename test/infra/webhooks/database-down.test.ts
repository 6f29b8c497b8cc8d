/**
 * The delivery queue while the database is down: no crash, no unhandled rejection, every failure
 * reported, and the work done once the database is back (a lost completion: sent again after the
 * lease lapses).
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { AccountService } from '../../../src/domain/accounts/service.js';
import { rowView } from '../../../src/domain/webhooks/delivery.js';
import { WebhookSecrets } from '../../../src/domain/webhooks/secrets.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import type { WebhookDeliveryRepository } from '../../../src/domain/webhooks/repository.js';
import type { WebhookTuning } from '../../../src/infra/webhooks/index.js';
import { withoutRepeats } from '../../../src/lib/repeat-filter.js';
import { sqliteBackend } from '../store/backends.js';
import { startReceiver, status } from './receiver.js';
import { finishedJob, finishedRow, nothingMore, watchedWebhooks } from './suite.js';
import { eventually } from '../../helpers/eventually.js';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/** Makes the repository's `names` reject while `down()` says so, as a database that is away would. */
function failWhile(repository: WebhookDeliveryRepository, names: readonly (keyof WebhookDeliveryRepository)[], down: () => boolean): void {
  const repo = repository as unknown as Record<keyof WebhookDeliveryRepository, (...args: unknown[]) => Promise<unknown>>;
  for (const name of names) {
    const real = repo[name].bind(repo);
    repo[name] = (...args: unknown[]) => (down() ? Promise.reject(new Error('database is down')) : real(...args));
  }
}
const NO_DNS = [{ host: '127.0.0.1', port: 1 }];
/**
 * The receiver answers at once: a timeout far above that, so that a busy machine never turns an
 * answer into a failed attempt; the lease just above it (it must exceed the timeout), so that a
 * lost completion is sent again within a few seconds.
 */
const TUNING = { retryDelaysMs: [40], timeoutMs: 3_000, pollMs: 20, leaseMs: 3_500 } satisfies WebhookTuning;

/**
 * A webhook queue on a fresh SQLite store with one account and a receiver answering 200, whose
 * repository calls `failing` reject while `down()` says so; everything closes when the test ends.
 */
async function outage(t: TestContext, failing: readonly (keyof WebhookDeliveryRepository)[], down: () => boolean, tuning: WebhookTuning, onError: (err: unknown) => void) {
  const b = sqliteBackend();
  const store = await b.open();
  const { account } = await new AccountService(store).createAccount({ email: 'down@example.com', name: 'Down' });
  const receiver = await startReceiver(status(200));
  failWhile(store.webhookDeliveries, failing, down);
  const w = watchedWebhooks({ store, dialer: createDialer({ allowTargets: LOOPBACK, dnsServers: NO_DNS }), secrets: new WebhookSecrets(store), tuning, onError });
  t.after(async () => {
    await w.queue.close();
    await receiver.close();
    await store.close();
    await b.drop();
  });
  return { store, account, receiver, w };
}

test('the queue survives a database that is down (claims and completions fail) and delivers once it is back', async (t) => {
  // The repository's every call fails while `down`.
  let down = false;
  const errors: unknown[] = [];
  const { store, account, receiver, w } = await outage(t, ['claim', 'complete', 'release', 'purge'], () => down, TUNING, (err) => errors.push(err));

  // Down before the event is claimed: polls fail and are reported, nothing is sent.
  down = true;
  const first = finishedJob(receiver.url);
  assert.equal(await w.delivery.enqueue(first, account.id), true);
  await eventually(async () => errors.length, (n) => n >= 3);
  assert.ok(errors.length >= 3);
  assert.equal(receiver.received.length, 0);
  down = false;
  const [a] = await eventually(() => w.delivery.attemptsOf(first.id), (x) => x.length === 1);
  assert.deepEqual([a!.attempt, a!.status], [1, 200]);

  // Down between the send and its record: the attempt is lost, and sent again once the lease
  // lapses. Down from the claim until that record has failed, however long the send takes.
  const second = finishedJob(receiver.url);
  let sentOnce = false;
  let recordLost = false;
  const repo = store.webhookDeliveries;
  const realClaim = repo.claim.bind(repo);
  repo.claim = async (...args) => {
    const got = await realClaim(...args);
    if (got.length > 0 && !sentOnce) {
      sentOnce = true;
      down = true;
    }
    return got;
  };
  const failingComplete = repo.complete.bind(repo);
  repo.complete = async (...args) => {
    try {
      return await failingComplete(...args);
    } finally {
      if (sentOnce && !recordLost) {
        recordLost = true;
        down = false;
      }
    }
  };
  await w.delivery.finished(second, account.id);
  const [b2] = await eventually(() => w.delivery.attemptsOf(second.id), (x) => x.length === 1, { timeoutMs: 30_000 });
  assert.deepEqual([b2!.attempt, b2!.status], [1, 200]);
  assert.equal(receiver.received.filter((r) => JSON.parse(r.body).data.id === second.id).length, 2, 'sent again after the lost record');
});

test('a job finished while the database failed to queue its event: the sweep fails quietly meanwhile (one report a minute) and sends the event once it is back', async (t) => {
  // Queueing and the sweep's look-up fail while `down`; claims still work.
  let down = false;
  const errors: unknown[] = [];
  const reported: unknown[] = [];
  const report = withoutRepeats((err) => reported.push(err), 60_000);
  const { store, account, receiver, w } = await outage(t, ['enqueue', 'unqueued'], () => down, { ...TUNING, sweepMs: 30, sweepGraceMs: 0 }, (err) => {
    errors.push(err);
    report(err);
  });

  down = true;
  const id = await finishedRow(store, account.id, { url: receiver.url, agoMs: 1_000 });
  await w.delivery.finished(await rowView(store)((await store.jobs.find(id))!), account.id);
  await eventually(async () => errors.length, (n) => n >= 4);
  assert.ok(errors.length >= 4, 'the lost enqueue and every failed sweep were reported');
  assert.equal(reported.length, 1, 'the log has one line for them');
  assert.equal(receiver.received.length, 0);

  down = false;
  await eventually(async () => receiver.received.length, (n) => n >= 1);
  await nothingMore(store, w);
  assert.equal(receiver.received.length, 1);
  assert.equal((JSON.parse(receiver.received[0]!.body) as { data: { id: string } }).data.id, id);
});
