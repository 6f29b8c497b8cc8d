import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { LazyRequestLogger, genReqId, lazyChildLogger, registerObservability } from '../../src/http/plugins/observability.js';

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

test('LazyRequestLogger makes its child only when it logs, and the lines carry the bindings', () => {
  const { logger, lines } = capture();
  let children = 0;
  const parent = Object.assign(Object.create(logger) as typeof logger, {
    child: (...args: Parameters<typeof logger.child>) => {
      children++;
      return logger.child(...args);
    },
  });
  const lazy = new LazyRequestLogger(parent, { reqId: 'r-1' }, {});
  assert.equal(lazy.level, 'info');
  lazy.debug('below the level');
  assert.equal(children, 1, 'a call made the child (pino decides the level)');
  assert.equal(lines.length, 0);
  lazy.info({ a: 1 }, 'hello %s', 'world');
  lazy.error(new Error('boom'));
  assert.equal(children, 1, 'one child per request logger');
  assert.deepEqual(
    lines.map((l) => [l.reqId, l.msg, l.a]),
    [
      ['r-1', 'hello world', 1],
      ['r-1', 'boom', undefined],
    ],
  );
  assert.equal((lines[1]!.err as { message: string }).message, 'boom');
  const unused = new LazyRequestLogger(parent, { reqId: 'r-2' }, { level: 'warn' });
  assert.equal(unused.level, 'warn', 'a level given for the child shows before it exists');
  assert.equal(children, 1, 'an unused request logger never makes its child');
  lazy.child({ sub: true }).warn('from a grandchild');
  assert.deepEqual([lines[2]!.reqId, lines[2]!.sub], ['r-1', true]);
});

test('through Fastify: the request line has the request id, and request.log lines too', async (t) => {
  const { logger, lines } = capture();
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, genReqId, childLoggerFactory: lazyChildLogger, disableRequestLogging: true });
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
