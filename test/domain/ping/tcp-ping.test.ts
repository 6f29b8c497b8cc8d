import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TcpPinger } from '../../../src/domain/ping/index.js';
import { Dialer } from '../../../src/infra/net/dialer.js';
import { TargetPolicy } from '../../../src/infra/net/policy.js';
import { DnsHostResolver } from '../../../src/infra/net/resolver.js';
import { eventually } from '../../helpers/eventually.js';
import { hangingConnect } from '../../infra/net/fixtures/connect-spy.js';

test('an abort mid-ping: probes not started never are, the started ones close at once, no listener leak', async () => {
  // Connects that never answer: each would wait its full 10 s.
  const { fn, sockets } = hangingConnect();
  const dialer = new Dialer({ policy: new TargetPolicy(['127.0.0.0/8']), resolver: new DnsHostResolver([{ host: '127.0.0.1', port: 1 }]), connectFn: fn });
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const controller = new AbortController();
    const pinging = new TcpPinger({ dialer }).ping('127.0.0.1', { port: 9, count: 20, timeout: 10, signal: controller.signal });
    await eventually(() => sockets.length >= 12);
    const started = sockets.length;
    controller.abort(new Error('client went away'));
    await assert.rejects(pinging, /client went away/);
    assert.ok(sockets.length < 20, 'the rest were never started');
    assert.equal(sockets.length, started);
    await eventually(() => sockets.every((s) => s.destroyed));
    assert.equal(dialer.stats.active, 0);
    assert.deepEqual(warnings.filter((w) => w === 'MaxListenersExceededWarning'), []);
  } finally {
    process.off('warning', onWarning);
  }
});
