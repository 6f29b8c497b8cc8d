import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PortScanner, type PortResult, type ScanDialer } from '../../../src/domain/ports/index.js';
import { ResolveError, TargetForbiddenError, ValidationError } from '../../../src/errors.js';
import { SocketBudget } from '../../../src/domain/socket-budget.js';
import { Dialer, type ConnectFn } from '../../../src/infra/net/dialer.js';
import { TargetPolicy } from '../../../src/infra/net/policy.js';
import { DnsHostResolver } from '../../../src/infra/net/resolver.js';
import { closedPort, connectSpy, startListener } from '../../infra/net/fixtures/connect-spy.js';
import { startDnsServer, type TestDnsServer } from '../../infra/net/fixtures/dns-server.js';
import { quietLowPorts } from './fixtures/quiet-ports.js';
import { blackholeUnavailable, runInBlackhole } from './fixtures/blackhole.js';
import { fileURLToPath } from 'node:url';

const LOOPBACK = ['127.0.0.0/8', '::1/128'];
/** TEST-NET-1: allowed in some tests so the fakes below stand in for a distant network. */
const TEST_NET = '192.0.2.0/24';
/** Every port here answers at once (listeners, closed ports, fakes): a timeout no busy machine reaches. */
const T = { timeoutMs: 10_000 };

let dns: TestDnsServer;
let listeners: Array<Awaited<ReturnType<typeof startListener>>>;
let v6: Awaited<ReturnType<typeof startListener>>;

before(async () => {
  dns = await startDnsServer({
    'scanme.test': { A: (asked) => (asked === 0 ? ['127.0.0.1'] : ['192.0.2.66']), AAAA: [] },
    'gone.test': { nxdomain: true },
    'mixed.test': { A: ['93.184.216.34', '10.0.0.1'], AAAA: [] },
  });
  listeners = await Promise.all([startListener('127.0.0.1'), startListener('127.0.0.1'), startListener('127.0.0.1')]);
  v6 = await startListener('::1');
});
after(async () => {
  await Promise.all([dns.close(), v6.close(), ...listeners.map((l) => l.close())]);
});

function dialer(allow: string[], connectFn?: ConnectFn, maxGlobalSockets?: number): Dialer {
  return new Dialer({
    policy: new TargetPolicy(allow),
    resolver: new DnsHostResolver([{ host: dns.host, port: dns.port }]),
    ...(connectFn ? { connectFn } : {}),
    ...(maxGlobalSockets ? { maxGlobalSockets } : {}),
  });
}

/**
 * Resolves once every socket the dialer made has closed (close events land a tick after destroy).
 * A scanner's slots are the dialer's (its budget is the only one), so `scanner` adds nothing to wait for.
 */
async function settled(d: Dialer, scanner?: PortScanner): Promise<void> {
  for (let i = 0; i < 1_000 && (d.stats.active > 0 || (scanner && d.stats.waiting > 0)); i++) {
    await new Promise((r) => setImmediate(r));
  }
  assert.equal(d.stats.active, 0, 'every socket closed');
  if (scanner) assert.deepEqual({ active: d.stats.active, waiting: d.stats.waiting }, { active: 0, waiting: 0 }, 'every scanner slot given back');
}

const states = (results: PortResult[]) => Object.fromEntries(results.map((r) => [r.port, r.state]));

describe('open and closed on loopback', () => {
  test('listeners are exactly the open ports; the rest are closed; sorted, without duplicates', async () => {
    const d = dialer(LOOPBACK);
    const scanner = new PortScanner({ dialer: d });
    const quiet = quietLowPorts(40);
    const open = listeners.map((l) => l.port);
    const asked = [...open, ...quiet, ...quiet.slice(0, 10), open[0]!].reverse();
    const results = await scanner.scanPorts('127.0.0.1', asked, T);

    const expected = [...new Set(asked)].sort((a, b) => a - b);
    assert.deepEqual(results.map((r) => r.port), expected);
    assert.deepEqual(results.filter((r) => r.open).map((r) => r.port), [...open].sort((a, b) => a - b));
    for (const r of results) {
      const isOpen = open.includes(r.port);
      assert.equal(r.state, isOpen ? 'open' : 'closed', `port ${r.port}`);
      assert.equal(r.open, isOpen);
      assert.equal(r.reason, isOpen ? 'connected' : 'connection refused');
      assert.equal(r.host, '127.0.0.1');
      assert.equal(r.ip, '127.0.0.1');
      assert.ok(typeof r.response_time === 'number' && r.response_time >= 0);
      assert.equal(Math.round(r.response_time * 100) / 100, r.response_time, 'two decimals at most');
    }
    assert.equal(d.stats.connectAttempts, expected.length, 'one connect per distinct port');
    await settled(d, scanner);
  });

  test('IPv6: a listener on [::1] is open, a free port closed', async () => {
    const d = dialer(LOOPBACK);
    const closed = await closedPort('::1');
    const results = await new PortScanner({ dialer: d }).scanPorts('[::1]', [v6.port, closed], T);
    assert.deepEqual(states(results), { [v6.port]: 'open', [closed]: 'closed' });
    assert.equal(results[0]!.ip, '::1');
    await settled(d);
  });

  test('single port: open, then closed once the listener is gone', async () => {
    const d = dialer(LOOPBACK);
    const scanner = new PortScanner({ dialer: d });
    const l = await startListener('127.0.0.1');
    const open = await scanner.scanPort('127.0.0.1', l.port, T);
    assert.ok(typeof open.queued_ms === 'number' && open.queued_ms >= 0, 'the wait for a slot is reported apart');
    assert.deepEqual({ ...open, response_time: 0, queued_ms: 0 }, {
      host: '127.0.0.1', ip: '127.0.0.1', port: l.port, open: true, state: 'open', service: null, response_time: 0, queued_ms: 0, reason: 'connected', error: null,
    });
    await l.close();
    const closed = await scanner.scanPort('127.0.0.1', l.port, T);
    assert.equal(closed.state, 'closed');
    assert.equal(closed.open, false);
    await settled(d, scanner);
  });

  test('well-known ports carry their IANA service name', async () => {
    const d = dialer(LOOPBACK);
    const results = await new PortScanner({ dialer: d }).scanPorts('127.0.0.1', [22, 25, 80, 443, 3306], T);
    assert.deepEqual(results.map((r) => r.service), ['ssh', 'smtp', 'http', 'https', 'mysql']);
    await settled(d);
  });

  test('connecting to itself (TCP simultaneous open) is a closed port, not an open one', async () => {
    const port = await closedPort('127.0.0.1');
    // The kernel picks the scanned port as the local one now and then on loopback; forced here.
    const d = dialer(LOOPBACK, (o) => net.connect({ ...o, localAddress: '127.0.0.1', localPort: o.port }));
    const r = await new PortScanner({ dialer: d }).scanPort('127.0.0.1', port, T);
    assert.equal(r.state, 'closed');
    assert.equal(r.open, false);
    await settled(d);
  });
});

describe('a port with nothing listening is never open, the scanning host included', () => {
  // In its own network namespace: other test files open and close listeners in the ephemeral
  // range all the time, and one that lived only during a chunk would look like a wrong "open".
  test('every port of the ephemeral range on 127.0.0.1, on the bare TCP handle: open only where a listener is', { skip: blackholeUnavailable() ?? false }, async () => {
    const out = await runInBlackhole(fileURLToPath(new URL('./fixtures/ephemeral-scan.ts', import.meta.url)), [], {});
    assert.equal(out.code, 0, out.stderr);
    const { scanned, range, listeners: ours, open } = JSON.parse(out.stdout) as { scanned: number; range: [number, number]; listeners: number[]; open: number[] };
    assert.equal(scanned, range[1] - range[0] + 1);
    assert.deepEqual(open, ours, 'ports reported open with nothing listening (connected to itself)');
  });
});

describe('filtered', () => {
  test('an unreachable host is filtered, with the reason', async () => {
    // The spy fails non-loopback connects itself: nothing leaves this machine.
    const spy = connectSpy('EHOSTUNREACH');
    const d = dialer([TEST_NET], spy.fn);
    const results = await new PortScanner({ dialer: d }).scanPorts('192.0.2.1', [80, 443], T);
    assert.deepEqual(results.map((r) => [r.port, r.state, r.open, r.reason]), [
      [80, 'filtered', false, 'host unreachable'],
      [443, 'filtered', false, 'host unreachable'],
    ]);
    assert.deepEqual(spy.hosts(), ['192.0.2.1', '192.0.2.1']);
  });
  // A port that really drops SYNs is scanned through the API in test/http/ports.test.ts.
});

describe('unresolved', () => {
  test('each lookup failure is the DNS answer it got, on every port; nothing is dialled', async () => {
    const cases: Array<[ResolveError, string]> = [
      [new ResolveError('ENOTFOUND', 'x.test', 'x.test does not exist (NXDOMAIN)'), 'NXDOMAIN'],
      [new ResolveError('ENODATA', 'x.test', 'x.test has no A or AAAA record'), 'NODATA'],
      [new ResolveError('ETIMEOUT', 'x.test', 'DNS lookup of x.test timed out'), 'TIMEOUT'],
      [new ResolveError('ESERVFAIL', 'x.test', 'SERVFAIL'), 'SERVFAIL'],
      [new ResolveError('EREFUSED', 'x.test', 'refused'), 'REFUSED'],
      [new ResolveError('EDNS', 'x.test', 'failed', { cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) }), 'UNREACHABLE'],
      [new ResolveError('EDNS', 'x.test', 'failed', { cause: Object.assign(new Error('x'), { code: 'EBADRESP' }) }), 'ERROR'],
    ];
    for (const [err, answer] of cases) {
      let dialled = 0;
      const stub: ScanDialer = {
        resolve: () => Promise.reject(err),
        probe: () => {
          dialled++;
          throw new Error('no packet for a name that did not resolve');
        },
        socketBudget: (n = 1) => new SocketBudget(n),
      };
      const results = await new PortScanner({ dialer: stub }).scanPorts(' x.test ', [443, 80], T);
      assert.deepEqual(
        results.map((r) => [r.host, r.ip, r.port, r.open, r.state, r.error, r.reason, r.response_time, r.queued_ms]),
        [80, 443].map((port) => ['x.test', null, port, false, 'unresolved', answer, err.message, null, null]),
        err.code,
      );
      assert.equal(dialled, 0);
    }
  });
});

describe('the host is resolved and checked once, and the scan goes to that address', () => {
  test('one A query for the whole scan; every port dialled on the address it returned', async () => {
    const before = dns.queries.filter((q) => q === 'A scanme.test').length;
    const spy = connectSpy();
    const d = dialer([...LOOPBACK, TEST_NET], spy.fn);
    const ports = [listeners[0]!.port, ...quietLowPorts(30)];
    const results = await new PortScanner({ dialer: d }).scanPorts('scanme.test', ports, T);
    // The name would answer 192.0.2.66 if asked again; it is not.
    assert.equal(dns.queries.filter((q) => q === 'A scanme.test').length - before, 1);
    assert.deepEqual([...new Set(spy.hosts())], ['127.0.0.1']);
    assert.ok(results.every((r) => r.host === 'scanme.test' && r.ip === '127.0.0.1'));
    assert.equal(results.find((r) => r.port === listeners[0]!.port)?.state, 'open');
    await settled(d);
  });

  test('a name that does not exist: a result per port saying so, nothing dialled', async () => {
    const d = dialer(LOOPBACK);
    const results = await new PortScanner({ dialer: d }).scanPorts('gone.test', [443, 80, 80], T);
    assert.deepEqual(results.map((r) => r.port), [80, 443]);
    for (const r of results) {
      assert.equal(r.ip, null);
      assert.equal(r.open, false);
      assert.equal(r.state, 'unresolved');
      assert.equal(r.response_time, null);
      assert.match(r.reason, /gone\.test does not exist/);
    }
    assert.equal(d.stats.connectAttempts, 0);
  });
});

describe('refused before any connect', () => {
  for (const host of ['127.0.0.1', 'localhost', '10.0.0.1', '169.254.169.254', '2130706433', '[::ffff:127.0.0.1]', 'mixed.test']) {
    test(`forbidden target ${host}: TargetForbiddenError, no connect attempted`, async () => {
      const spy = connectSpy();
      const d = dialer([], spy.fn);
      await assert.rejects(new PortScanner({ dialer: d }).scanPorts(host, [80, 443], T), TargetForbiddenError);
      assert.equal(d.stats.connectAttempts, 0);
      assert.equal(spy.calls.length, 0);
    });
  }

  const bad: Array<[string, () => Promise<unknown>, string]> = [
    ['empty ports', () => scan('127.0.0.1', []), 'ports: at least 1 entry'],
    ['1001 ports', () => scan('127.0.0.1', Array.from({ length: 1001 }, (_, i) => i + 1)), 'ports: at most 1000 entries'],
    ['port 0', () => scan('127.0.0.1', [80, 0]), 'ports[1]: must be an integer between 1 and 65535'],
    ['port 65536', () => scan('127.0.0.1', [65536]), 'ports[0]: must be an integer between 1 and 65535'],
    ['port 1.5', () => scan('127.0.0.1', [1.5]), 'ports[0]: must be an integer between 1 and 65535'],
    ['timeout 0.5 s', () => scan('127.0.0.1', [80], 500), 'timeout: must be 1-30 seconds'],
    ['timeout 31 s', () => scan('127.0.0.1', [80], 31_000), 'timeout: must be 1-30 seconds'],
    ['single port 0', () => new PortScanner({ dialer: dialer(LOOPBACK) }).scanPort('127.0.0.1', 0, T), 'port: must be an integer between 1 and 65535'],
    ['a host with a space', () => scan('exa mple.com', [80]), 'host: '],
    ['an empty host', () => scan('  ', [80]), 'host: must not be empty'],
  ];
  let lastDialer: Dialer;
  function scan(host: string, ports: number[], timeoutMs = 1_000): Promise<unknown> {
    lastDialer = dialer(LOOPBACK);
    return new PortScanner({ dialer: lastDialer }).scanPorts(host, ports, { timeoutMs });
  }
  for (const [name, run, message] of bad) {
    test(`${name}: ValidationError "${message}…"`, async () => {
      await assert.rejects(run(), (e: unknown) => {
        assert.ok(e instanceof ValidationError);
        assert.ok(e.message.startsWith(message), e.message);
        return true;
      });
      if (lastDialer) assert.equal(lastDialer.stats.connectAttempts, 0);
    });
  }
});

describe('budgets', () => {
  /** Sockets to TEST-NET that fail after a few ms (standing in for a distant network), counted while alive. */
  function slowNetwork(): { fn: ConnectFn; live: () => number; peak: () => number } {
    let live = 0;
    let peak = 0;
    const fn: ConnectFn = () => {
      const socket = new net.Socket();
      live++;
      peak = Math.max(peak, live);
      socket.once('close', () => live--);
      setTimeout(() => socket.destroy(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })), 5);
      return socket;
    };
    return { fn, live: () => live, peak: () => peak };
  }

  test('one scan keeps at most `maxSockets` connects in flight', async () => {
    const net_ = slowNetwork();
    const d = dialer([TEST_NET], net_.fn);
    const scanner = new PortScanner({ dialer: d }, { maxSockets: 7 });
    const results = await scanner.scanPorts('192.0.2.1', Array.from({ length: 60 }, (_, i) => i + 1), T);
    assert.equal(results.length, 60);
    assert.ok(results.every((r) => r.state === 'closed'));
    assert.equal(net_.peak(), 7);
    await settled(d, scanner);
  });

  test('all scans together stay within the shared budget, and every one completes', async () => {
    const net_ = slowNetwork();
    const d = dialer([TEST_NET], net_.fn, 12);
    const scanner = new PortScanner({ dialer: d }, { maxSockets: 8 });
    const ports = Array.from({ length: 40 }, (_, i) => i + 1);
    const all = await Promise.all(Array.from({ length: 6 }, (_, i) => scanner.scanPorts(`192.0.2.${i + 1}`, ports, T)));
    assert.ok(all.every((results) => results.length === 40 && results.every((r) => r.state === 'closed')));
    assert.equal(net_.peak(), 12);
    assert.equal(d.stats.connectAttempts, 240);
    await settled(d, scanner);
  });

  test('an aborted scan rejects, dials nothing more and closes what it had open', async () => {
    // Connects that never answer: only the abort ends them.
    const d = dialer([TEST_NET], () => new net.Socket());
    const scanner = new PortScanner({ dialer: d }, { maxSockets: 4 });
    const ac = new AbortController();
    const scan = scanner.scanPorts('192.0.2.1', Array.from({ length: 50 }, (_, i) => i + 1), { timeoutMs: 30_000, signal: ac.signal });
    while (d.stats.connectAttempts < 4) await new Promise((r) => setImmediate(r));
    ac.abort(new Error('client went away'));
    await assert.rejects(scan, /client went away/);
    assert.equal(d.stats.connectAttempts, 4);
    await settled(d, scanner);
  });
});

describe('a job run again skips the ports it stored', () => {
  test('positions in `skip` are neither dialled nor reported; the others are, at their places', async () => {
    const spy = connectSpy();
    const d = dialer(LOOPBACK, spy.fn);
    const ports = quietLowPorts(20).sort((a, b) => a - b);
    const skip = new Set([0, 3, 4, 19]);
    const reported: number[] = [];
    const tally = await new PortScanner({ dialer: d }).scanPortsEach('127.0.0.1', ports, { ...T, skip, onItem: (i, r) => {
      assert.equal(r.port, ports[i]);
      reported.push(i);
    } });
    const rest = ports.map((_, i) => i).filter((i) => !skip.has(i));
    assert.deepEqual(reported.sort((a, b) => a - b), rest);
    assert.deepEqual(spy.calls.map((c) => c.port).sort((a, b) => Number(a) - Number(b)), rest.map((i) => ports[i]));
    assert.equal(tally.closed, rest.length);
    assert.equal(tally.first, null, 'the first port was stored before');
    // A name that does not resolve: the skipped positions are not reported either.
    const unresolved: number[] = [];
    await new PortScanner({ dialer: d }).scanPortsEach('gone.test', [80, 443, 8080], { ...T, skip: new Set([1]), onItem: (i) => unresolved.push(i) });
    assert.deepEqual(unresolved, [0, 2]);
    await settled(d);
  });
});
