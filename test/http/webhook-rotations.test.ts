import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { composeApp } from '../../src/compose-app.js';
import { loadConfig } from '../../src/config.js';
import { AccountService } from '../../src/domain/accounts/service.js';
import { PREVIOUS_SECRET_MS, WebhookSecrets } from '../../src/domain/webhooks/secrets.js';
import { signedHeaders } from '../../src/domain/webhooks/signing.js';
import type { Store } from '../../src/domain/store.js';
import { assertMatchesOpenApi, checkResponses } from '../helpers/contract.js';
import { TEST_DATABASE_URL, postgresBackend, sqliteBackend, type Backend } from '../infra/store/backends.js';

/**
 * docs/jobs.md: every secret replaced within the last 24 hours keeps signing until
 * its own 24 hours end; at most 3 signatures ride on a delivery, and a rotation that would need a
 * fourth is a 409 `conflict` saying when to try again. Over HTTP, on SQLite and on PostgreSQL,
 * with a clock the test moves.
 */

interface SecretView {
  secret: string;
  created_at: string;
  previous_valid_until: string | null;
  replaced_valid_until: string[];
}
const HOUR = 3_600_000;

async function served(t: TestContext, backend: Backend, clock: () => Date) {
  const store: Store = await backend.open();
  const config = loadConfig({ DATABASE_URL: backend.name === 'sqlite' ? 'sqlite::memory:' : TEST_DATABASE_URL!, NETDIAG_DNS_SERVERS: '127.0.0.1:1' });
  const app = await composeApp({ config, store, logger: false, clock, recordUsage: false });
  checkResponses(t, app);
  t.after(async () => {
    await app.close();
    await store.close();
    await backend.drop();
  });
  const { token, account } = await new AccountService(store, clock).createAccount({ email: 'rotate@example.com', name: 'Rotate', plan: 'enterprise' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as import('node:net').AddressInfo;
  const call = async (method: 'GET' | 'POST', path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { success: boolean; data: SecretView; error?: string; message: string; details?: { retry_at?: string } };
    await assertMatchesOpenApi(app, method, path, res.status, body);
    return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
  };
  return { store, accountId: account.id, call };
}

function suite(name: string, backend: () => Backend): void {
  test(`${name}: two rotations within a day keep both replaced secrets signing until each one's own 24 hours end; a third is a 409`, async (t) => {
    let now = Date.UTC(2026, 2, 1, 10, 0, 0);
    const clock = () => new Date(now);
    const s = await served(t, backend(), clock);
    const s0 = (await s.call('GET', '/api/webhooks/secret')).body.data.secret;

    const r1 = await s.call('POST', '/api/webhooks/secret/rotate');
    assert.equal(r1.status, 200);
    const s1 = r1.body.data.secret;
    const s0Until = now + PREVIOUS_SECRET_MS;

    now += HOUR;
    const r2 = await s.call('POST', '/api/webhooks/secret/rotate');
    assert.equal(r2.status, 200);
    const s2 = r2.body.data.secret;
    assert.equal(r2.body.data.previous_valid_until, new Date(now + PREVIOUS_SECRET_MS).toISOString());
    assert.deepEqual(r2.body.data.replaced_valid_until, [new Date(now + PREVIOUS_SECRET_MS).toISOString(), new Date(s0Until).toISOString()]);

    // Every one of the three signs a delivery now, and a receiver holding any one verifies it.
    const secrets = new WebhookSecrets(s.store, clock);
    const stored = await secrets.get(s.accountId);
    assert.deepEqual(secrets.signingSecrets(stored), [s2, s1, s0], 'the first secret was not dropped by the second rotation');
    // The receiver checks the timestamp against its own clock.
    const ts = Math.floor(Date.now() / 1000);
    const headers = signedHeaders(secrets.signingSecrets(stored), 'msg_rotation', ts, '{"type":"job.succeeded"}');
    assert.equal(headers['webhook-signature'].split(' ').length, 3);
    for (const secret of [s0, s1, s2]) {
      assert.ok(new Webhook(secret).verify('{"type":"job.succeeded"}', { ...headers }), 'verifies with each secret');
    }

    // A fourth signature is never needed: the rotation is refused, saying when to try again.
    now += HOUR;
    const r3 = await s.call('POST', '/api/webhooks/secret/rotate');
    assert.equal(r3.status, 409);
    assert.equal(r3.body.error, 'conflict');
    assert.ok(r3.body.message.includes(new Date(s0Until).toISOString()), r3.body.message);
    assert.equal(r3.retryAfter, String(Math.ceil((s0Until - now) / 1000)));
    assert.equal((await s.call('GET', '/api/webhooks/secret')).body.data.secret, s2, 'a refused rotation changes nothing');

    // Each replaced secret stops signing when its own 24 hours end.
    assert.deepEqual(secrets.signingSecrets(stored, s0Until - 1), [s2, s1, s0]);
    assert.deepEqual(secrets.signingSecrets(stored, s0Until), [s2, s1]);

    // Once the first secret's day is over, a rotation is accepted again: three sign, the first is gone.
    now = s0Until;
    const r4 = await s.call('POST', '/api/webhooks/secret/rotate');
    assert.equal(r4.status, 200);
    const s3 = r4.body.data.secret;
    assert.deepEqual(secrets.signingSecrets(await secrets.get(s.accountId)), [s3, s2, s1]);
  });

  test(`${name}: concurrent rotations never store a fourth signer nor lose a replaced secret`, async (t) => {
    const now = Date.UTC(2026, 2, 2, 10, 0, 0);
    const clock = () => new Date(now);
    const s = await served(t, backend(), clock);
    const s0 = (await s.call('GET', '/api/webhooks/secret')).body.data.secret;
    const answers = await Promise.all(Array.from({ length: 5 }, () => s.call('POST', '/api/webhooks/secret/rotate')));
    const ok = answers.filter((a) => a.status === 200);
    assert.equal(ok.length, 2, answers.map((a) => a.status).join(','));
    assert.ok(answers.every((a) => a.status === 200 || a.status === 409));
    const secrets = new WebhookSecrets(s.store, clock);
    const signing = secrets.signingSecrets(await secrets.get(s.accountId));
    assert.equal(signing.length, 3);
    assert.equal(signing[2], s0);
    assert.ok(ok.some((a) => a.body.data.secret === signing[0]));
  });
}

suite('sqlite', sqliteBackend);
if (TEST_DATABASE_URL) {
  const url = TEST_DATABASE_URL;
  suite('postgres', () => postgresBackend(url));
} else test('postgres: skipped because TEST_DATABASE_URL is unset', { skip: 'unset' }, () => {});
