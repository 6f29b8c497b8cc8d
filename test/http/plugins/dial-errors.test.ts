import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TcpPinger } from '../../../src/domain/ping/index.js';
import { DialError } from '../../../src/errors.js';
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
