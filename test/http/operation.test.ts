import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from 'typebox';
import { RESULT_IS_ITEMS } from '../../src/domain/jobs/service.js';
import { webhookUrlOf } from '../../src/domain/webhooks/url.js';
import { prefersRespondAsync } from '../../src/http/operation.js';
import { defineOperation, jobOperation } from '../../src/operations/operation.js';
import { NO_METRICS } from '../../src/domain/metrics.js';
import type { RouteDeps } from '../../src/http/routes/deps.js';
import { ValidationError } from '../../src/errors.js';

/** Test operations are in no document. */
const NO_EXAMPLES = { ok: {} };

test('Prefer: respond-async is found in any case, among other preferences and with parameters (RFC 7240)', () => {
  for (const yes of ['respond-async', 'Respond-Async', 'return=minimal, respond-async', 'wait=10;x=1, RESPOND-ASYNC', ' respond-async ; foo=bar', 'respond-async=1']) {
    assert.equal(prefersRespondAsync(yes), true, yes);
  }
  assert.equal(prefersRespondAsync(['return=minimal', 'respond-async']), true);
  for (const no of [undefined, '', 'return=minimal', 'respond-asynchronously', 'x-respond-async', 'wait=respond-async', `${'a,'.repeat(3000)}respond-async`]) {
    assert.equal(prefersRespondAsync(no), false, String(no).slice(0, 40));
  }
});

test('webhook_url: absent, or an http(s) URL of at most 2048 characters', () => {
  assert.equal(webhookUrlOf(undefined), null);
  assert.equal(webhookUrlOf('https://hooks.example.com/x?a=1'), 'https://hooks.example.com/x?a=1');
  for (const bad of ['ftp://example.com/', 'not a url', 42, `https://example.com/${'a'.repeat(2048)}`, 'javascript:alert(1)']) {
    assert.throws(() => webhookUrlOf(bad), (err: unknown) => err instanceof ValidationError && err.details?.field === 'webhook_url', String(bad).slice(0, 40));
  }
});

test('a job of a bulk operation: every item reported once, written as the synchronous answer writes it, even when the run then throws', async () => {
  const Item = Type.Object({ port: Type.Integer(), state: Type.Union([Type.Literal('open'), Type.Literal('closed')]) });
  const op = defineOperation({
    path: '/x/bulk',
    summary: 'x',
    tags: [],
    body: Type.Object({ fail: Type.Boolean() }),
    data: Type.Array(Item),
    probe: false,
    examples: NO_EXAMPLES,
    items: () => 3,
    async run(_deps, body, ctx) {
      const data = [0, 1, 2].map((port) => ({ port, state: 'open' as const, secret: 'dropped' }));
      ctx.onItem?.(2, data[2]);
      ctx.onItem?.(0, data[0]);
      await new Promise((r) => setTimeout(r, 5));
      ctx.onItem?.(1, data[1]);
      if (body.fail) throw new Error('late failure');
      return { data, message: 'ok' };
    },
  });
  const job = jobOperation(op, { metrics: NO_METRICS } as RouteDeps);
  const seen: [number, string][] = [];
  const result = await job.run({ fail: false }, { signal: new AbortController().signal, onItem: (i, item) => seen.push([i, item()]) });
  assert.deepEqual(seen, [[2, '{"port":2,"state":"open"}'], [0, '{"port":0,"state":"open"}'], [1, '{"port":1,"state":"open"}']]);
  // The data is exactly the items reported: the result is those items in input order, not written again.
  assert.equal(result, RESULT_IS_ITEMS);
  seen.length = 0;
  await assert.rejects(job.run({ fail: true }, { signal: new AbortController().signal, onItem: (i, item) => seen.push([i, item()]) }), /late failure/);
  assert.deepEqual(seen.map(([i]) => i), [2, 0, 1]);
});

test('a job whose final data is not exactly the items it reported is written from the data, with the answer schema (fields dropped, values coerced)', async () => {
  const Item = Type.Object({ port: Type.Integer(), open: Type.Boolean() });
  const op = defineOperation({
    path: '/x/range',
    summary: 'x',
    tags: [],
    body: Type.Object({}),
    data: Type.Array(Item),
    probe: false,
    examples: NO_EXAMPLES,
    items: () => 2,
    async run(_deps, _body, ctx) {
      ctx.onItem?.(0, { port: 1, open: true });
      ctx.onItem?.(1, { port: 2, open: false });
      // Copies, and one of them changed after it was reported: the data decides the result. A
      // port as a string is what the compiler refuses a real run; the serializer coerces it.
      const data: unknown = [{ port: 1, open: true, extra: 'x' }, { port: '2', open: true }];
      return { data: data as { port: number; open: boolean }[], message: 'ok' };
    },
  });
  const result = await jobOperation(op, { metrics: NO_METRICS } as RouteDeps).run({}, { signal: new AbortController().signal, onItem: () => undefined });
  assert.equal(result, '[{"port":1,"open":true},{"port":2,"open":true}]');
  // The same objects, but one item reported twice and another never: the data decides.
  const twice = defineOperation({
    ...op,
    async run(_deps, _body, ctx) {
      const data = [{ port: 1, open: true }, { port: 2, open: false }];
      ctx.onItem?.(0, data[0]);
      ctx.onItem?.(0, data[0]);
      return { data, message: 'ok' };
    },
  });
  assert.equal(await jobOperation(twice, { metrics: NO_METRICS } as RouteDeps).run({}, { signal: new AbortController().signal, onItem: () => undefined }), '[{"port":1,"open":true},{"port":2,"open":false}]');
  const single = defineOperation({ ...op, path: '/x/one', items: undefined, data: Item, async run() { return { data: { port: 7, open: false, hidden: 1 }, message: 'ok' }; } });
  assert.equal(await jobOperation(single, { metrics: NO_METRICS } as RouteDeps).run({}, { signal: new AbortController().signal }), '{"port":7,"open":false}');
});

test('a job run again: the stored items are the result with what it reports now, whether the call skipped them or ran them again (their reports dropped)', async () => {
  const Item = Type.Object({ port: Type.Integer() });
  const done = new Set([0, 2]);
  const make = (skips: boolean) =>
    defineOperation({
      path: '/x/bulk',
      summary: 'x',
      tags: [],
      body: Type.Object({}),
      data: Type.Array(Item),
      probe: false,
      examples: NO_EXAMPLES,
      items: () => 4,
      async run(_deps, _body, ctx) {
        const data: Array<{ port: number }> = new Array(4);
        for (let i = 0; i < 4; i++) {
          if (skips && ctx.done?.has(i)) continue;
          data[i] = { port: i };
          ctx.onItem?.(i, data[i]);
        }
        return { data, message: 'ok' };
      },
    });
  for (const skips of [true, false]) {
    const seen: number[] = [];
    const result = await jobOperation(make(skips), { metrics: NO_METRICS } as RouteDeps).run({}, { signal: new AbortController().signal, onItem: (i) => seen.push(i), done });
    assert.deepEqual(seen, [1, 3], `skips: ${skips}`);
    assert.equal(result, RESULT_IS_ITEMS, `skips: ${skips}`);
  }
});
