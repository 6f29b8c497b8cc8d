import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { rawConnect } from '../../../src/infra/net/raw-connect.js';
import { blackholeUnavailable, runInBlackhole } from '../../domain/ports/fixtures/blackhole.js';
import { silentPorts } from '../../fixtures/silent-ports.js';
import { closedPort, startListener } from './fixtures/connect-spy.js';
import { answer, WAYS, type Answer, type Way } from './fixtures/probe-answers.js';

/**
 * raw-connect.ts (`process.binding('tcp_wrap')`) is kept only while it answers exactly as
 * net.connect does: on open, closed, filtered and self-connecting ports, both through
 * dialer.probe() and as the scanner's item. The gain that pays for it: bench/port-scan.ts,
 * 1000 loopback ports, net.connect 1.8x as slow in the same run (see the commit that added this).
 */

const TIMEOUT_MS = 1_000;

async function both(host: '127.0.0.1' | '::1', port: number): Promise<Record<Way, Answer>> {
  const [raw, socket] = await Promise.all(WAYS.map((way) => answer(way, host, port, TIMEOUT_MS)));
  return { raw: raw!, socket: socket! };
}

test('this Node offers the bare TCP handle (without it scans fall back to net.connect)', () => {
  assert.ok(rawConnect);
});

test('open, closed and filtered loopback ports: the bare handle answers as net.connect does', async () => {
  const v4 = await startListener('127.0.0.1');
  const v6 = await startListener('::1');
  const silent = await silentPorts(1);
  try {
    const cases: Array<[string, '127.0.0.1' | '::1', number, Answer]> = [
      ['open', '127.0.0.1', v4.port, { code: null, selfConnect: false, state: 'open', reason: 'connected' }],
      ['open, IPv6', '::1', v6.port, { code: null, selfConnect: false, state: 'open', reason: 'connected' }],
      ['closed', '127.0.0.1', await closedPort('127.0.0.1'), { code: 'ECONNREFUSED', selfConnect: false, state: 'closed', reason: 'connection refused' }],
      ['closed, IPv6', '::1', await closedPort('::1'), { code: 'ECONNREFUSED', selfConnect: false, state: 'closed', reason: 'connection refused' }],
      // A listener whose full accept queue makes Linux drop further SYNs.
      ['filtered', '127.0.0.1', silent.ports[0]!, { code: 'ETIMEDOUT', selfConnect: false, state: 'filtered', reason: 'no answer within 1 s' }],
    ];
    for (const [what, host, port, expected] of cases) {
      const { raw, socket } = await both(host, port);
      assert.deepEqual(raw, socket, `${what}: the same answer both ways`);
      assert.deepEqual(raw, expected, what);
    }
  } finally {
    silent.close();
    await Promise.all([v4.close(), v6.close()]);
  }
});

test('a signal ends every probe in flight under it, and only those', async () => {
  const silent = await silentPorts(2);
  try {
    const connect = rawConnect!;
    const first = new AbortController();
    const other = new AbortController();
    const reason = new Error('the scan was cancelled');
    // Probes that would wait their whole timeout: nothing answers on a silent port.
    const ended = [0, 1, 0].map((i) => connect('127.0.0.1', 4, silent.ports[i]!, 30_000, first.signal).then(() => 'answered', (err: unknown) => err));
    const kept = connect('127.0.0.1', 4, silent.ports[1]!, 200, other.signal);
    first.abort(reason);
    for (const outcome of await Promise.all(ended)) assert.equal(outcome, reason);
    assert.equal((await kept).code, 'ETIMEDOUT', 'a probe under another signal runs to its own end');
    // Once aborted, a signal ends a new probe at once.
    await assert.rejects(connect('127.0.0.1', 4, silent.ports[0]!, 30_000, first.signal), (err) => err === reason);
  } finally {
    silent.close();
  }
});

test('a black-holed port and a self-connect: the bare handle answers as net.connect does', { skip: blackholeUnavailable() ?? false }, async () => {
  const child = fileURLToPath(new URL('./fixtures/probe-answers.ts', import.meta.url));
  const out = await runInBlackhole(child, ['--in-namespace', JSON.stringify({ selfPort: 40_001, timeoutMs: TIMEOUT_MS })], { host: '127.0.0.3' });
  assert.equal(out.code, 0, out.stderr);
  const { filtered, selfConnect } = JSON.parse(out.stdout) as Record<'filtered' | 'selfConnect', Record<Way, Answer>>;
  assert.deepEqual(filtered.raw, filtered.socket, 'filtered: the same answer both ways');
  assert.deepEqual(filtered.raw, { code: 'ETIMEDOUT', selfConnect: false, state: 'filtered', reason: 'no answer within 1 s' });
  assert.deepEqual(selfConnect.raw, selfConnect.socket, 'self-connect: the same answer both ways');
  assert.deepEqual(selfConnect.raw, { code: null, selfConnect: true, state: 'closed', reason: 'connection refused (nothing listening)' });
});

test('an answer that arrived while the event loop was busy past the timeout wins over the timeout', async () => {
  const listener = await startListener('127.0.0.1');
  const closed = await closedPort('127.0.0.1');
  try {
    const timeoutMs = 50;
    const open = rawConnect!('127.0.0.1', 4, listener.port, timeoutMs);
    const refused = rawConnect!('127.0.0.1', 4, closed, timeoutMs);
    // One long turn: both handshakes end in the kernel at once, but neither answer is read before
    // the timers are due (timers run before the poll phase that reads them).
    const until = performance.now() + 4 * timeoutMs;
    while (performance.now() < until);
    assert.equal((await open).code, null, 'open, not filtered');
    assert.equal((await refused).code, 'ECONNREFUSED', 'closed, not filtered');
  } finally {
    await listener.close();
  }
});

