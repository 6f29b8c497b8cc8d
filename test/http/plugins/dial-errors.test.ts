import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { TcpPinger } from '../../../src/domain/ping/index.js';
import type { CheckedAddress } from '../../../src/domain/dialer.js';
import { DialError, PATH_TOOL_BUSY_RETRY_S, PathToolError } from '../../../src/errors.js';
import { PathRunner } from '../../../src/infra/path/index.js';
import { LOCAL_ADDRESS_RETRY_AFTER_S } from '../../../src/error-answers.js';
import { errorResponseOf } from '../../../src/http/plugins/errors.js';

test('a ping whose connect finds no local address free is a 503 with Retry-After, not a 500', async () => {
  const dialer = {
    resolve: async () => ({ target: '127.0.0.1', hostname: null, addresses: ['127.0.0.1'] }),
    probe: async () => ({ code: 'EADDRNOTAVAIL' as const, elapsedMs: 0.1, selfConnect: false, queuedMs: 0 }),
    socketBudget: () => ({}),
  };
  const pinger = new TcpPinger({ dialer } as unknown as ConstructorParameters<typeof TcpPinger>[0]);
  const err = await pinger.ping('127.0.0.1', { count: 1 }).then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof DialError && err.code === 'EADDRNOTAVAIL');
  const r = errorResponseOf(err);
  assert.equal(r.status, 503);
  assert.equal(r.body.error, 'service_unavailable');
  assert.equal(r.headers['retry-after'], String(LOCAL_ADDRESS_RETRY_AFTER_S));
  assert.equal(r.unexpected, false);
  // Any other failure the probe cannot classify stays a 500 (a bug to look at).
  assert.equal(errorResponseOf(new DialError('EDIAL', '127.0.0.1', 80, 0)).status, 500);
});

test('a path tool stopped at its deadline (a machine too busy to run it in time) is a 503 with Retry-After; another failure stays a 500', async () => {
  // A "ping" that never ends: the runner stops it at its (here short) deadline.
  const runner = new PathRunner({
    programs: { ping: process.execPath },
    deadlinesMs: { ping: 200 },
    spawn: (_file, _args, options) => spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], options),
  });
  const err = await runner.ping({ address: '127.0.0.1' as CheckedAddress, family: 4, packets: 1 }, {}).then(
    () => assert.fail('resolved'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof PathToolError && err.kind === 'busy', String(err));
  const r = errorResponseOf(err);
  assert.equal(r.status, 503);
  assert.equal(r.body.error, 'service_unavailable');
  assert.match(r.body.message, /ping: did not finish within 0\.2 s/);
  assert.equal(r.headers['retry-after'], String(PATH_TOOL_BUSY_RETRY_S));
  assert.equal(errorResponseOf(new PathToolError('ping', 'failed', 'exit code 7')).status, 500);
});
