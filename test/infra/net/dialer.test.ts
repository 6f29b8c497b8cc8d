import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { CheckedAddress } from '../../../src/domain/dialer.js';
import { Dialer, type ConnectFn } from '../../../src/infra/net/dialer.js';
import { TargetPolicy } from '../../../src/infra/net/policy.js';
import type { HostResolver } from '../../../src/infra/net/resolver.js';
import { closedPort, hangingConnect, startListener } from './fixtures/connect-spy.js';
import { eventually } from '../../helpers/eventually.js';
import { rawConnect } from '../../../src/infra/net/raw-connect.js';
import { runAsOwner } from '../../../src/domain/owner.js';
import { DialError } from '../../../src/errors.js';

/** Connects to a live listener answer at once: a timeout no busy machine reaches, so the answer never depends on its speed. */
const LIVE_TIMEOUT_MS = 30_000;

const LOOP = '127.0.0.1' as CheckedAddress;
const noDns: HostResolver = {
  resolve: () => Promise.reject(new Error('these tests resolve nothing')),
};

/** Real connects, counting how many sockets the dialer has open at once. */
function countingConnect(): { fn: ConnectFn; maxOpen: () => number; created: net.Socket[] } {
  let open = 0;
  let max = 0;
  const created: net.Socket[] = [];
  const fn: ConnectFn = (opts) => {
    const s = net.connect(opts);
    created.push(s);
    open++;
    max = Math.max(max, open);
    s.once('close', () => open--);
    return s;
  };
  return { fn, maxOpen: () => max, created };
}

/** A dialer whose sockets never connect (SYNs into the void, without sending any), kept for inspection. */
function hangingDialer(): { dialer: Dialer; sockets: net.Socket[] } {
  const hanging = hangingConnect();
  return { dialer: dialerWith({ connectFn: hanging.fn }), sockets: hanging.sockets };
}

function dialerWith(opts: { max?: number; connectFn?: ConnectFn } = {}): Dialer {
  return new Dialer({
    policy: new TargetPolicy(['127.0.0.0/8', '::1/128']),
    resolver: noDns,
    ...(opts.max ? { maxGlobalSockets: opts.max } : {}),
    ...(opts.connectFn ? { connectFn: opts.connectFn } : {}),
  });
}

/** One turn of the event loop. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A destroyed socket frees its slot when it has closed, a turn or two later. */
async function settle(dialer: Dialer): Promise<void> {
  await eventually(() => dialer.stats.active === 0, { what: 'every socket slot freed' });
}

describe('dialer', () => {
  let listener: Awaited<ReturnType<typeof startListener>>;
  before(async () => {
    listener = await startListener('127.0.0.1');
  });
  after(() => listener.close());

  test('global cap 2: ten concurrent connects never have more than two sockets open', async () => {
    const counting = countingConnect();
    const dialer = dialerWith({ max: 2, connectFn: counting.fn });
    let maxActive = 0;
    let maxWaiting = 0;
    const results = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const socket = await dialer.connect(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS });
        maxActive = Math.max(maxActive, dialer.stats.active);
        maxWaiting = Math.max(maxWaiting, dialer.stats.waiting);
        // Held a turn of the loop, while the others' connects go on.
        await turn();
        socket.destroy();
        return socket;
      }),
    );
    assert.equal(results.length, 10);
    assert.ok(maxActive <= 2, `active reached ${maxActive}`);
    assert.ok(counting.maxOpen() <= 2, `open reached ${counting.maxOpen()}`);
    assert.ok(maxWaiting > 0, 'later connects waited in the queue instead of failing');
    assert.equal(dialer.stats.connectAttempts, 10);
    await settle(dialer);
    assert.equal(dialer.stats.active, 0);
    assert.equal(dialer.stats.waiting, 0);
  });

  test('aborting a queued connect removes it from the queue and frees nothing it did not hold', async () => {
    const dialer = dialerWith({ max: 1 });
    const held = await dialer.connect(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS });
    const controller = new AbortController();
    const queued = dialer.connect(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS, signal: controller.signal });
    await eventually(() => dialer.stats.waiting === 1);
    assert.equal(dialer.stats.waiting, 1);
    controller.abort();
    await assert.rejects(queued, (e: unknown) => e instanceof DialError && e.code === 'ABORT_ERR');
    assert.equal(dialer.stats.waiting, 0);
    assert.equal(dialer.stats.connectAttempts, 1);
    assert.equal(dialer.stats.active, 1);

    held.destroy();
    const next = await dialer.connect(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS });
    assert.equal(dialer.stats.active, 1);
    next.destroy();
    await settle(dialer);
    assert.equal(dialer.stats.active, 0);
  });

  test("owners share the global budget: one owner's queue never holds back another's first connect", async () => {
    // Sockets to 127.0.0.2 hang (never told to connect); 127.0.0.1 really connects.
    const hanging: net.Socket[] = [];
    const connectFn: ConnectFn = (opts) => {
      if (opts.host === '127.0.0.1') return net.connect(opts);
      const s = new net.Socket();
      hanging.push(s);
      return s;
    };
    const dialer = new Dialer({ policy: new TargetPolicy(['127.0.0.0/8']), resolver: noDns, maxGlobalSockets: 4, maxPerOwnerSockets: 3, connectFn });
    const silent = '127.0.0.2' as CheckedAddress;
    const controller = new AbortController();
    const opts = { timeoutMs: 30_000, signal: controller.signal };
    // A: ten dials, by option and by context; only its share (3) start.
    const aDials = [
      ...Array.from({ length: 5 }, () => dialer.connect(silent, 80, { ...opts, owner: 'A' })),
      ...Array.from({ length: 5 }, () => runAsOwner('A', () => dialer.connect(silent, 80, opts))),
    ].map((p) => p.catch((e: unknown) => e));
    await eventually(() => hanging.length === 3 && dialer.stats.waiting === 7);
    assert.equal(hanging.length, 3);
    assert.equal(dialer.stats.waiting, 7);
    // B's connect starts at once on the slot A may not take, and says it did not wait for it.
    const b = await runAsOwner('B', () => dialer.dial(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS }));
    assert.equal(hanging.length, 3, "no more of A's connects started meanwhile");
    assert.ok(b.queuedMs >= 0 && b.elapsedMs >= 0);
    b.socket.destroy();
    controller.abort();
    const outcomes = await Promise.all(aDials);
    assert.ok(outcomes.every((e) => e instanceof DialError && e.code === 'ABORT_ERR'));
    await settle(dialer);
    assert.deepEqual({ active: dialer.stats.active, waiting: dialer.stats.waiting, attempts: dialer.stats.connectAttempts }, { active: 0, waiting: 0, attempts: 4 });
  });

  test('an already aborted signal never creates a socket', async () => {
    const dialer = dialerWith();
    await assert.rejects(
      dialer.connect(LOOP, listener.port, { timeoutMs: 1_000, signal: AbortSignal.abort() }),
      (e: unknown) => e instanceof DialError && e.code === 'ABORT_ERR',
    );
    assert.equal(dialer.stats.connectAttempts, 0);
  });

  test('a per-request socket budget caps its own connects on top of the global budget', async () => {
    const dialer = dialerWith({ max: 10 });
    const budget = dialer.socketBudget(1);
    let maxHeld = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        const socket = await dialer.connect(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS, budget });
        maxHeld = Math.max(maxHeld, budget.active);
        await turn();
        socket.destroy();
      }),
    );
    assert.equal(maxHeld, 1);
    await settle(dialer);
    assert.equal(budget.active, 0);
  });

  test('connection refused: DialError ECONNREFUSED with elapsedMs, socket slot freed', async () => {
    const port = await closedPort('127.0.0.1');
    const counting = countingConnect();
    const dialer = dialerWith({ connectFn: counting.fn });
    const err = await dialer.connect(LOOP, port, { timeoutMs: LIVE_TIMEOUT_MS }).catch((e: unknown) => e);
    assert.ok(err instanceof DialError);
    assert.equal(err.code, 'ECONNREFUSED');
    assert.ok(err.elapsedMs >= 0 && err.elapsedMs < LIVE_TIMEOUT_MS, `refused after ${err.elapsedMs} ms, before the timeout`);
    assert.equal(err.reason, 'connection refused');
    assert.ok(counting.created[0]!.destroyed);
    await settle(dialer);
    assert.equal(dialer.stats.active, 0);
  });

  test('timeout: DialError ETIMEDOUT and the socket is destroyed', async () => {
    const { dialer, sockets } = hangingDialer();
    const started = performance.now();
    const err = await dialer.connect(LOOP, 9, { timeoutMs: 60 }).catch((e: unknown) => e);
    assert.ok(err instanceof DialError);
    assert.equal(err.code, 'ETIMEDOUT');
    assert.ok(performance.now() - started >= 55);
    assert.ok(err.elapsedMs >= 55);
    assert.ok(sockets[0]!.destroyed);
    await settle(dialer);
    assert.equal(dialer.stats.active, 0);
  });

  test('abort during connect: ABORT_ERR and the socket is destroyed', async () => {
    const { dialer, sockets } = hangingDialer();
    const controller = new AbortController();
    const connecting = dialer.connect(LOOP, 9, { timeoutMs: 5_000, signal: controller.signal });
    // Aborted once the connect is under way: its socket exists.
    await eventually(() => sockets.length === 1, { what: 'the connect under way' });
    controller.abort();
    await assert.rejects(connecting, (e: unknown) => e instanceof DialError && e.code === 'ABORT_ERR');
    assert.ok(sockets[0]!.destroyed);
    await settle(dialer);
    assert.equal(dialer.stats.active, 0);
  });

  test('a connectFn that throws frees its slot', async () => {
    const dialer = dialerWith({
      max: 1,
      connectFn: () => {
        throw new Error('boom');
      },
    });
    await assert.rejects(dialer.connect(LOOP, 80, { timeoutMs: 100 }), (e: unknown) => e instanceof DialError);
    await assert.rejects(dialer.connect(LOOP, 80, { timeoutMs: 100 }), (e: unknown) => e instanceof DialError);
    assert.equal(dialer.stats.active, 0);
  });

  test('dial() reports the connect time; connects go to the literal address with no lookup', async () => {
    const seen: net.TcpNetConnectOpts[] = [];
    const dialer = dialerWith({
      connectFn: (o) => {
        seen.push(o);
        return net.connect(o);
      },
    });
    const { socket, elapsedMs } = await dialer.dial(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS });
    socket.destroy();
    assert.ok(elapsedMs >= 0 && Number.isFinite(elapsedMs));
    assert.equal(Math.round(elapsedMs * 100) / 100, elapsedMs);
    assert.equal(seen[0]!.host, '127.0.0.1');
    assert.equal(seen[0]!.family, 4);
  });

  test('bad arguments are programming errors, not dials', async () => {
    const dialer = dialerWith();
    await assert.rejects(dialer.connect(LOOP, 0, { timeoutMs: 100 }), RangeError);
    await assert.rejects(dialer.connect(LOOP, 70000, { timeoutMs: 100 }), RangeError);
    await assert.rejects(dialer.connect(LOOP, 80, { timeoutMs: 0 }), RangeError);
    assert.throws(() => dialer.socketBudget(0), RangeError);
    assert.equal(dialer.stats.connectAttempts, 0);
  });

  test('probe() on the bare TCP handle: open, refused, a forbidden address never dialled, slots freed', async () => {
    assert.ok(rawConnect, 'this Node offers the tcp_wrap handle; without it scans fall back to net.connect');
    const dialer = dialerWith();
    const open = await dialer.probe(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS });
    assert.equal(open.code, null);
    assert.equal(open.selfConnect, false);
    assert.ok(open.elapsedMs >= 0);
    const refused = await dialer.probe(LOOP, await closedPort('127.0.0.1'), { timeoutMs: LIVE_TIMEOUT_MS });
    assert.equal(refused.code, 'ECONNREFUSED');
    const v6 = await dialer.probe('::1' as CheckedAddress, await closedPort('::1'), { timeoutMs: LIVE_TIMEOUT_MS });
    assert.equal(v6.code, 'ECONNREFUSED');
    assert.equal(dialer.stats.connectAttempts, 3);
    assert.equal(dialer.stats.active, 0);
    // A string cast into CheckedAddress is still checked: no connect is attempted.
    await assert.rejects(dialer.probe('10.0.0.1' as CheckedAddress, 80, { timeoutMs: 100 }), { name: 'TargetForbiddenError' });
    assert.equal(dialer.stats.connectAttempts, 3);
  });

  test('probe() times out as ETIMEDOUT and rejects an abort, releasing its slot both times', async () => {
    const dialer = dialerWith({ max: 1 });
    // Loopback answers at once, so the abort lands while the probe waits: the real silent-port
    // timeout is covered by the ports tests' black hole inside unshare -n.
    const ac = new AbortController();
    const held = dialer.probe(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS, signal: ac.signal });
    ac.abort(new Error('client went away'));
    await assert.rejects(held, (err: unknown) => err instanceof DialError && err.code === 'ABORT_ERR');
    assert.equal(dialer.stats.active, 0);
    const after = await dialer.probe(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS });
    assert.equal(after.code, null, 'the slot came back');
  });

  test('probe() goes through a given connectFn, so a spy sees every connect', async () => {
    const counting = countingConnect();
    const dialer = dialerWith({ connectFn: counting.fn });
    assert.equal((await dialer.probe(LOOP, listener.port, { timeoutMs: LIVE_TIMEOUT_MS })).code, null);
    assert.equal((await dialer.probe(LOOP, await closedPort('127.0.0.1'), { timeoutMs: LIVE_TIMEOUT_MS })).code, 'ECONNREFUSED');
    assert.equal(counting.created.length, 2);
    await settle(dialer);
    assert.ok(counting.created.every((s) => s.destroyed));
  });

  test('probe() resets the connections it makes: no TIME_WAIT is left behind per open port', async (t) => {
    // A listener of its own: the other tests close their connections normally, in TIME_WAIT.
    const own = await startListener('127.0.0.1');
    t.after(() => own.close());
    const timeWait = (): number | null => {
      try {
        const out = execFileSync('ss', ['-Htan', 'state', 'time-wait', `( dport = :${own.port} )`], { encoding: 'utf8' });
        return out.split('\n').filter((l) => l.trim() !== '').length;
      } catch {
        return null;
      }
    };
    const before = timeWait();
    if (before === null) return t.skip('ss (iproute2) is not installed');
    const dialer = dialerWith();
    for (let i = 0; i < 50; i++) assert.equal((await dialer.probe(LOOP, own.port, { timeoutMs: LIVE_TIMEOUT_MS })).code, null);
    // Every connection is over on the listener's side too: whatever state ours was left in, it is there now.
    await eventually(() => own.connections() === 0, { what: "the listener's connections closed" });
    // A normal close would leave one TIME_WAIT per probe on our side (dport = the listener).
    assert.ok(timeWait()! <= before, `TIME_WAIT to the listener: ${before} before, ${timeWait()} after 50 probes`);
  });
});
