import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import { build } from '../helpers/build.js';

/**
 * The suite's referee fails a test whose answers the OpenAPI document does not describe: here
 * the failure is caught, by building the app with a context whose `after` hooks this test runs.
 */

/** A context that keeps its `after` hooks for the test to run (and whose temporary files the real `t` removes). */
function heldContext(t: TestContext): { context: TestContext; runAfter: () => Promise<unknown[]> } {
  const hooks: (() => unknown)[] = [];
  const context = { after: (fn: () => unknown) => void hooks.push(fn) } as unknown as TestContext;
  const runAfter = async (): Promise<unknown[]> => {
    const errors: unknown[] = [];
    for (const fn of hooks) {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    }
    return errors;
  };
  t.after(runAfter);
  return { context, runAfter };
}

/** A documented route that answers what its schema does not allow (fast-json-stringify writes any string for an enum). */
function driftingRoutes(app: FastifyInstance): void {
  const options: RouteShorthandOptions = {
    schema: {
      operationId: 'contractProbe',
      response: { 200: { type: 'object', required: ['kind'], properties: { kind: { type: 'string', enum: ['documented'] } } } },
    },
  };
  app.get(
    '/api/contract-probe',
    options,
    async (request, reply) => {
      if ((request.query as { teapot?: string }).teapot !== undefined) return reply.code(418).send({ kind: 'documented' });
      return { kind: 'drifted' };
    },
  );
}

test('an answer whose body breaks its documented schema fails the test that received it', async (t) => {
  const { context, runAfter } = heldContext(t);
  const { api } = await build(context, { extraRoutes: driftingRoutes });
  const res = await api('/api/contract-probe');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { kind: 'drifted' });
  const errors = await runAfter();
  assert.equal(errors.length, 1, 'the mismatch was not reported');
  assert.match(String(errors[0]), /GET \/api\/contract-probe 200: the body does not match the document: data\/kind must be equal to one of the allowed values/);
});

test('a status the document does not list for the route fails the test', async (t) => {
  const { context, runAfter } = heldContext(t);
  const { api } = await build(context, { extraRoutes: driftingRoutes });
  assert.equal((await api('/api/contract-probe?teapot')).status, 418);
  const errors = await runAfter();
  assert.match(String(errors[0]), /GET \/api\/contract-probe 418: the document has no 418 response for it/);
});

test('the answers of a documented route that keep to the document pass, errors and headers included', async (t) => {
  const { context, runAfter } = heldContext(t);
  const { api } = await build(context);
  assert.equal((await api('/api/user')).status, 200);
  assert.equal((await api('/api/user', { token: null })).status, 401);
  assert.equal((await api('/api/dns/lookup', { json: { domain: '' } })).status, 400);
  assert.equal((await api('/api/dns/lookup', { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } })).status, 415);
  assert.equal((await api('/api/jobs/job_nothing')).status, 404);
  assert.deepEqual(await runAfter(), []);
});
