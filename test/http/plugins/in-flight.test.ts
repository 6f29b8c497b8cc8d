import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { IN_FLIGHT_LIMITS } from '../../../src/domain/accounts/plans.js';
import { slotHolder } from '../../../src/http/call-steps.js';
import { registerInFlight } from '../../../src/http/plugins/in-flight.js';
import { MemoryInFlightSlots } from '../../../src/infra/in-flight/index.js';
import type { InFlightSlots } from '../../../src/domain/in-flight.js';
import { currentOwner } from '../../../src/domain/owner.js';
import type { Account } from '../../../src/domain/accounts/repositories.js';
import { AppError } from '../../../src/errors.js';

/** The in-process counter answering through a promise, as the Redis one does. */
class AsyncSlots implements InFlightSlots {
  readonly inner = new MemoryInFlightSlots();
  async tryAcquire(owner: string, max: number): Promise<(() => void) | null> {
    await new Promise((r) => setImmediate(r));
    return this.inner.tryAcquire(owner, max);
  }
  async close(): Promise<void> {}
}

/**
 * The plugin alone: a stand-in for auth.ts sets the account, a probe route waits until the test
 * lets it answer and reports whose work it ran as.
 */
async function appWith(slots: InFlightSlots): Promise<{ app: FastifyInstance; finish: () => void }> {
  const app = Fastify();
  app.decorateRequest('account', null);
  app.decorateRequest('receivedAt', 0);
  app.addHook('onRequest', (request, _reply, done) => {
    request.account = { id: Number(request.headers['x-account']), plan: 'free' } as Account;
    request.receivedAt = Date.now();
    done();
  });
  // What the error plugin sends, in short: the code, the status, the headers and the details.
  app.setErrorHandler((err, _request, reply) => {
    if (!(err instanceof AppError)) throw err;
    void reply.status(err.status).headers(err.headers ?? {}).send({ error: err.code, details: err.details });
  });
  registerInFlight(app, { hold: slotHolder(slots) });
  let release!: () => void;
  let gate = new Promise<void>((r) => (release = r));
  app.post('/probe', { config: { probe: true } }, async () => {
    const owner = currentOwner();
    await gate;
    return { owner };
  });
  app.post('/other', async () => ({ owner: currentOwner() ?? null }));
  await app.ready();
  return {
    app,
    finish: () => {
      release();
      gate = new Promise<void>((r) => (release = r));
    },
  };
}

test('a counter that answers later (Redis): the same admission, the handler runs as its account, slots come back', async (t) => {
  const slots = new AsyncSlots();
  const { app, finish } = await appWith(slots);
  t.after(() => app.close());
  const call = (path: string, account = 7) => app.inject({ method: 'POST', url: path, headers: { 'x-account': String(account) } });

  const running = Array.from({ length: IN_FLIGHT_LIMITS.free }, () => call('/probe'));
  for (let i = 0; i < 100 && slots.inner.heldBy('acct:7') < IN_FLIGHT_LIMITS.free; i++) await new Promise((r) => setImmediate(r));
  assert.equal(slots.inner.heldBy('acct:7'), IN_FLIGHT_LIMITS.free);

  const refused = await call('/probe');
  assert.equal(refused.statusCode, 429);
  assert.equal(refused.headers['retry-after'], '1');
  const body = refused.json() as { error: string; details: { window: string; limit: number; remaining: number } };
  assert.deepEqual([body.error, body.details.window, body.details.limit, body.details.remaining], ['rate_limit_exceeded', 'concurrent', 10, 0]);
  assert.equal(slots.inner.heldBy('acct:7'), IN_FLIGHT_LIMITS.free, 'the refused request took nothing');

  // Another account has slots of its own.
  running.push(call('/probe', 8));
  for (let i = 0; i < 100 && slots.inner.heldBy('acct:8') < 1; i++) await new Promise((r) => setImmediate(r));
  assert.equal(slots.inner.heldBy('acct:8'), 1);

  assert.deepEqual((await call('/other')).json(), { owner: null }, 'routes that do not probe are neither counted nor run as an owner');
  finish();
  const answers = await Promise.all(running);
  assert.deepEqual(answers.map((r) => r.json()), [...Array.from({ length: IN_FLIGHT_LIMITS.free }, () => ({ owner: 'acct:7' })), { owner: 'acct:8' }]);
  assert.equal(slots.inner.heldBy('acct:7'), 0, 'given back once answered');
  assert.equal(slots.inner.heldBy('acct:8'), 0);
});
