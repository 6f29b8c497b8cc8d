import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OPERATIONS, type AnyOperation } from '../../src/operations/index.js';
import { PLANS } from '../../src/domain/accounts/plans.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { build, type Built } from '../helpers/build.js';
import { roomyLimiter } from '../helpers/roomy-limiter.js';
import { connectSpy } from '../infra/net/fixtures/connect-spy.js';

/**
 * The security contract every operation's route keeps (docs/errors.md, docs/api.md), checked for
 * each operation of src/operations in one loop, so a new one is covered the day it is declared:
 * 401 without a token or with an unknown one, 400 for a body its schema refuses, 403
 * target_forbidden for a probe aimed at a forbidden address (nothing dialled), 429 once the plan's
 * minute is spent, and 202 with `Prefer: respond-async`. Bodies are the operation's documented
 * example (the requestBody examples of /api/openapi.json), changed only where the check needs it.
 *
 * One app per kind of app, not per operation: each check is a subtest per operation inside it.
 * Nothing reaches the network: the dialer's connects go through a spy that really connects only on
 * loopback (and the target policies here refuse loopback before that), DNS goes to a dead
 * loopback port (build()), and the jobs the 202s create are never run (NETDIAG_WORKERS=0).
 */

type Body = Record<string, unknown>;
type Envelope = { success: boolean; error: string; message: string; details?: Record<string, unknown> };

/**
 * Where each operation's probe is aimed, as fields that replace the example's to aim it at a
 * forbidden address; `perItem` when a bulk call refuses the entry in its 200 rather than the
 * request; or why there is nothing to forbid. Every operation must be here (checked below).
 */
const TARGETS: Record<string, { forbidden: Body; perItem?: true } | { nothingToForbid: string }> = {
  '/ipv6/validate': { nothingToForbid: 'it reads an address, probes nothing' },
  '/ipv6/expand': { nothingToForbid: 'it rewrites an address, probes nothing' },
  '/ipv6/test': { forbidden: { target: 'fd00::1' } },
  // A reverse lookup of a private address asks about a private network.
  '/dns/lookup': { forbidden: { domain: '10.0.0.1', type: 'PTR' } },
  '/dns/lookup-bulk': { forbidden: { domains: ['10.0.0.1'], type: 'PTR' }, perItem: true },
  '/dns/whois': { nothingToForbid: 'its servers are the registry of the domain, not an address the caller names' },
  '/ip/lookup': { nothingToForbid: 'it answers from local data and the configured resolvers' },
  '/ip/lookup-bulk': { nothingToForbid: 'it answers from local data and the configured resolvers' },
  '/ip/whois': { nothingToForbid: 'its server is the registry of the address, not the address itself' },
  '/proxy/check': { forbidden: { proxy: '10.0.0.1:8080' } },
  '/proxy/check-bulk': { forbidden: { proxies: ['10.0.0.1:8080'] }, perItem: true },
  '/port/scan': { forbidden: { host: '10.0.0.1' } },
  '/port/scan-range': { forbidden: { host: '169.254.169.254' } },
  '/port/scan-common': { forbidden: { host: '10.0.0.1' } },
  '/ping/tcp': { forbidden: { host: '169.254.169.254' } },
  '/ping': { forbidden: { target: '10.0.0.1' } },
  '/traceroute': { forbidden: { target: '169.254.169.254' } },
  '/mtr': { forbidden: { target: 'fd00::1' } },
  '/http/check': { forbidden: { url: 'http://169.254.169.254/latest/meta-data/' } },
  '/tls/check': { forbidden: { host: '10.0.0.1' } },
};

const UNKNOWN_TOKEN = `nd_${'A'.repeat(40)}`;
const CHALLENGE = 'Bearer realm="netdiag"';
const INVALID_TOKEN = 'Bearer realm="netdiag", error="invalid_token"';
const ASYNC = { prefer: 'respond-async' };
/** TEST-NET-1, -2 and -3 (RFC 5737), which the documented examples use. */
const DOCUMENTATION_RANGES = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'];

/** The operation's first documented request example, from the document /api/openapi.json serves. */
function examplesOf(b: Built): (op: AnyOperation) => Body {
  const doc = b.app.swagger() as { paths: Record<string, { post?: { requestBody?: { content: Record<string, { examples?: Record<string, { value: Body }> }> } } }> };
  return (op) => {
    const examples = doc.paths[`/api${op.path}`]?.post?.requestBody?.content['application/json']?.examples ?? {};
    const [first] = Object.values(examples);
    assert.ok(first, `POST /api${op.path} documents a request example`);
    return structuredClone(first.value);
  };
}

/** A body the operation's schema refuses, and the field it names: none of the required fields, else a number where a string belongs. */
function invalidBody(op: AnyOperation): { body: Body; fields: string[] } {
  const schema = op.body as { required?: string[]; properties?: Record<string, { type?: string }> };
  if (schema.required?.length) return { body: {}, fields: schema.required };
  const [name] = Object.entries(schema.properties ?? {}).find(([, p]) => p.type === 'string') ?? [];
  assert.ok(name, `POST /api${op.path}: a required field or a string field to get wrong`);
  return { body: { [name]: 12345 }, fields: [name] };
}

/** The answer is `status` in the envelope of docs/errors.md with `error`; its body. */
async function assertError(res: Response, status: number, error: string): Promise<Envelope> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  const body = JSON.parse(text) as Envelope;
  assert.equal(body.success, false);
  assert.equal(body.error, error);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0, 'a message that says what went wrong');
  assert.deepEqual(Object.keys(body).filter((k) => !['success', 'error', 'message', 'details'].includes(k)), [], 'nothing beside the envelope');
  return body;
}

const name = (op: AnyOperation) => `POST /api${op.path}`;

test('every operation is classified: a target to forbid, or why there is none', () => {
  assert.deepEqual(Object.keys(TARGETS).sort(), OPERATIONS.map((op) => op.path).sort());
  for (const op of OPERATIONS) {
    const target = TARGETS[op.path]!;
    if (!op.probe) continue;
    assert.ok('forbidden' in target || target.nothingToForbid.length > 0, `${name(op)} probes: a forbidden target, or why not`);
  }
});

test('each operation, unauthenticated, with a bad body, and aimed at a forbidden address', async (t) => {
  // Limits out of the way (the anonymous 401s are limited per address): this app's subject is not a 429.
  const spy = connectSpy();
  const dialer = createDialer({ allowTargets: [], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: spy.fn });
  const b = await build(t, { deps: { limiter: roomyLimiter(), dialer } });
  const example = examplesOf(b);

  await t.test('401 without a token, and with an unknown one', async (t) => {
    for (const op of OPERATIONS) {
      await t.test(name(op), async () => {
        const json = example(op);
        const missing = await b.api(`/api${op.path}`, { json, token: null });
        await assertError(missing, 401, 'unauthorized');
        assert.equal(missing.headers.get('www-authenticate'), CHALLENGE);
        const unknown = await b.api(`/api${op.path}`, { json, token: UNKNOWN_TOKEN });
        await assertError(unknown, 401, 'unauthorized');
        assert.equal(unknown.headers.get('www-authenticate'), INVALID_TOKEN);
      });
    }
  });

  await t.test('400 validation_error for a body the schema refuses, naming the field', async (t) => {
    for (const op of OPERATIONS) {
      await t.test(name(op), async () => {
        const { body, fields } = invalidBody(op);
        const res = await b.api(`/api${op.path}`, { json: body });
        const err = await assertError(res, 400, 'validation_error');
        assert.ok(fields.includes(String(err.details?.field)), `details.field ${String(err.details?.field)} is one of ${fields.join(', ')}`);
      });
    }
  });

  await t.test('403 target_forbidden for a probe aimed at a forbidden address, nothing dialled', async (t) => {
    for (const op of OPERATIONS) {
      const target = TARGETS[op.path];
      assert.ok(target, `${name(op)} is in TARGETS`);
      // No address of the caller's to probe: TARGETS says why, and the first test holds it to that.
      if ('nothingToForbid' in target) continue;
      const what = target.perItem ? `${name(op)}: the entry refused in the 200 (a bulk call answers per entry)` : name(op);
      await t.test(what, async () => {
        const json = { ...example(op), ...target.forbidden };
        const res = await b.api(`/api${op.path}`, { json });
        if (target.perItem) {
          assert.equal(res.status, 200);
          const items = ((await res.json()) as { data: Array<{ error?: string | null }> }).data;
          assert.equal(items.length, 1);
          assert.match(String(items[0]!.error), /in the blocked (private|link_local) range/);
        } else {
          const err = await assertError(res, 403, 'target_forbidden');
          assert.match(String(err.details?.address), /^(10\.0\.0\.1|169\.254\.169\.254|fd00::1)$/);
          assert.equal(typeof err.details?.range, 'string');
        }
        assert.deepEqual(spy.hosts(), [], 'nothing was dialled');
      });
    }
  });

  assert.deepEqual(spy.hosts(), [], 'no operation dialled anything');
});

test('each operation with Prefer: respond-async is a 202: the job queued, and where to find it', async (t) => {
  // The examples aim at documentation addresses (RFC 5737, never routed), which the default policy
  // refuses: this app allows them. Its jobs never run, and its connects would go through the spy.
  const spy = connectSpy();
  const dialer = createDialer({ allowTargets: DOCUMENTATION_RANGES, dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: spy.fn });
  const b = await build(t, { env: { NETDIAG_WORKERS: '0' }, deps: { dialer } });
  const example = examplesOf(b);
  for (const op of OPERATIONS) {
    await t.test(name(op), async () => {
      const res = await b.api(`/api${op.path}`, { json: example(op), headers: ASYNC });
      const text = await res.text();
      assert.equal(res.status, 202, text);
      const job = (JSON.parse(text) as { data: { id: string; endpoint: string; status: string } }).data;
      assert.deepEqual([job.endpoint, job.status], [op.path, 'queued']);
      assert.equal(res.headers.get('location'), `/api/jobs/${job.id}`);
      assert.equal(res.headers.get('preference-applied'), 'respond-async');
    });
  }
  assert.deepEqual(spy.hosts(), [], 'no operation dialled anything');
});

test("each operation is a 429 once the plan's minute is spent", async (t) => {
  // A clock that stands still: every call below falls in one minute.
  const b = await build(t, { plan: 'free', deps: { clock: () => new Date(Date.UTC(2026, 5, 1, 12, 0, 15)) } });
  const example = examplesOf(b);
  const perMinute = PLANS.free.requests_per_minute;
  for (let i = 0; i < perMinute; i++) assert.equal((await b.api('/api/user')).status, 200);
  for (const op of OPERATIONS) {
    await t.test(name(op), async () => {
      const res = await b.api(`/api${op.path}`, { json: example(op) });
      const err = await assertError(res, 429, 'rate_limit_exceeded');
      assert.deepEqual(err.details, { limit: perMinute, remaining: 0, reset_at: '2026-06-01 12:01:00', window: 'minute' });
      assert.equal(res.headers.get('retry-after'), '45');
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0');
    });
  }
});
