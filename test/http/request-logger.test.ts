import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { genReqId, registerObservability } from '../../src/http/plugins/observability.js';

/** A pino logger writing its lines into an array. */
function capture(level = 'info') {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

test('through Fastify: the request line has the request id, and request.log lines too', async (t) => {
  const { logger, lines } = capture();
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, genReqId, disableRequestLogging: true });
  t.after(() => app.close());
  registerObservability(app);
  app.get('/quiet', async () => ({ ok: true }));
  app.get('/loud', async (request) => {
    request.log.warn({ detail: 7 }, 'something to say');
    return { ok: true };
  });
  const quiet = await app.inject({ url: '/quiet', headers: { 'x-request-id': 'quiet-1' } });
  const loud = await app.inject({ url: '/loud', headers: { 'x-request-id': 'loud-1' } });
  assert.equal(quiet.headers['x-request-id'], 'quiet-1');
  assert.deepEqual(
    lines.map((l) => [l.msg, l.reqId, l.path ?? l.detail]),
    [
      ['request', 'quiet-1', '/quiet'],
      ['something to say', 'loud-1', 7],
      ['request', 'loud-1', '/loud'],
    ],
  );
  assert.equal(loud.statusCode, 200);
});
