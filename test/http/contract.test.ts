import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build } from '../helpers/build.js';
import { driftingRoutes } from '../fixtures/drifting-routes.js';
import { runnable } from '../helpers/node-script.js';

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
    // As node:test does: a hook added while they run is run after the others.
    for (let fn = hooks.shift(); fn; fn = hooks.shift()) {
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

test('a test whose answer drifts from the document fails under node --test, and its servers are still closed', async () => {
  const { loader, file } = runnable(fileURLToPath(new URL('../fixtures/contract-drift.ts', import.meta.url)));
  // Without the runner's own variable, the child runs as a test run of its own, not as part of this one.
  const { NODE_TEST_CONTEXT: _nested, ...env } = process.env;
  const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
    execFile(process.execPath, [...loader, '--test', file], { env, timeout: 120_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout + stderr }),
    );
  });
  assert.equal(run.code, 1, run.out);
  assert.match(run.out, /not ok 1 - a route that answers what its schema does not allow/);
  assert.match(run.out, /GET \/api\/contract-probe 200: the body does not match the document/);
  // The test's own after hook, added after build's, still ran: nothing was left open to hold the process.
  assert.match(run.out, /# pass 1\b/);
});

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
