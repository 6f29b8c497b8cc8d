import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { IN_FLIGHT_LIMITS } from '../../src/domain/accounts/plans.js';
import { MAX_PORTS_PER_SCAN } from '../../src/domain/ports/index.js';
import { MAX_GLOBAL_SOCKETS, MAX_PER_OWNER_SOCKETS, RESERVED_BELOW_SOCKETS } from '../../src/infra/net/defaults.js';
import { createDialer, type ConnectFn } from '../../src/infra/net/dialer.js';
import { currentOwner } from '../../src/domain/owner.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { startListener } from '../infra/net/fixtures/connect-spy.js';
import { eventually } from '../helpers/eventually.js';

/**
 * Issue 15: one account's twenty 1000-port scans of silent ports held the shared connect queue
 * for 81 s, and another account's one-port scan waited behind them. Here A (enterprise) asks
 * for 20 such scans and B for one open port right after; B must be answered while every one of
 * A's connects is still waiting for its answer.
 */

/** Connects to this address never complete (no packet is sent: the socket is never told to connect). */
const SILENT_HOST = '127.0.0.2';
/** Far longer than the test: A's connects are all still pending when B is answered, or the test fails. */
const SILENT_TIMEOUT_S = 30;
const A_SCANS = 20;
/** B's scan of the open port: shorter than A's, so that A's connects still wait when B's would time out. */
const OPEN_PORT_TIMEOUT_S = 10;

let listener: Awaited<ReturnType<typeof startListener>>;
before(async () => {
  listener = await startListener('127.0.0.1');
});
after(() => listener.close());

interface Item {
  port: number;
  state: string;
  open: boolean;
  response_time: number | null;
  queued_ms: number | null;
}

/**
 * A dialer whose connects to 127.0.0.1 are real and to any other address never complete (no
 * packet is sent: the socket is never told to connect); those sockets are kept, with the
 * account (owner) each was dialled for.
 */
function silentDialer() {
  const silent: net.Socket[] = [];
  const silentBy = new Map<string, number>();
  const connectFn: ConnectFn = (opts) => {
    if (opts.host === '127.0.0.1') return net.connect(opts);
    const s = new net.Socket();
    silent.push(s);
    const owner = currentOwner() ?? '';
    silentBy.set(owner, (silentBy.get(owner) ?? 0) + 1);
    return s;
  };
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn });
  return { silent, silentBy, dialer };
}

/**
 * `token`'s one-port scan of the open listener, which must answer `open` with its wait for a
 * slot; with the silent connects started, and those answered, when its answer came.
 */
async function scanOpenPort(b: Built, token: string, silent: net.Socket[]): Promise<{ connects: number; answered: number }> {
  // A long timeout: the listener answers at once, but a loop busy with thousands of sockets on a
  // loaded machine may read that answer after a short one, and "filtered" would be the machine's speed.
  const res = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: listener.port, timeout: OPEN_PORT_TIMEOUT_S }, token });
  const connects = silent.length;
  const answered = silent.filter((s) => s.destroyed).length;
  assert.equal(res.status, 200);
  const body = (await res.json()) as { data: Item };
  await assertMatchesOpenApi(b.app, 'POST', '/api/port/scan', 200, body);
  assert.equal(body.data.state, 'open');
  assert.equal(typeof body.data.queued_ms, 'number');
  return { connects, answered };
}

test("A's 20 scans of 1000 silent ports: 16 run, 4 are refused as concurrent; B's open port is answered before any of A's ports", async (t) => {
  const { silent, dialer } = silentDialer();
  const b = await build(t, { plan: 'enterprise', deps: { dialer } });
  const accountB = await b.accounts.createAccount({ email: 'b@example.com', name: 'B', plan: 'free' });

  const ports = Array.from({ length: MAX_PORTS_PER_SCAN }, (_, i) => i + 1);
  const hangUp = new AbortController();
  const statuses: number[] = [];
  const aScans = Array.from({ length: A_SCANS }, () =>
    b
      .api('/api/port/scan-range', { json: { host: SILENT_HOST, ports, timeout: SILENT_TIMEOUT_S }, signal: hangUp.signal })
      .then(async (res) => {
        statuses.push(res.status);
        if (res.status === 429) assert.equal(((await res.json()) as { details: { window: string } }).details.window, 'concurrent');
      })
      .catch((err: unknown) => {
        if (!hangUp.signal.aborted) throw err;
      }),
  );
  const refused = A_SCANS - IN_FLIGHT_LIMITS.enterprise;
  await eventually(() => statuses.length === refused && silent.length === MAX_PER_OWNER_SOCKETS);
  assert.deepEqual(statuses, Array.from({ length: refused }, () => 429), 'the 17th and later scans are refused');
  assert.equal(silent.length, MAX_PER_OWNER_SOCKETS, "A holds its share of the scanners' sockets, no more");
  assert.ok(dialer.stats.active === MAX_PER_OWNER_SOCKETS, 'and those connects are all in flight');

  const { connects: aConnectsWhenBAnswered, answered: aPortsAnsweredWhenBAnswered } = await scanOpenPort(b, accountB.token, silent);
  // Order, not time: when B had its answer, A had started no connect beyond its share and not
  // one of A's 16,000 ports had an answer, so none of A's scans was anywhere near half done.
  assert.equal(aConnectsWhenBAnswered, MAX_PER_OWNER_SOCKETS);
  assert.equal(aPortsAnsweredWhenBAnswered, 0);
  assert.ok(aConnectsWhenBAnswered < (IN_FLIGHT_LIMITS.enterprise * MAX_PORTS_PER_SCAN) / 2);

  // A hangs up: every queued port leaves the queue, every socket closes.
  hangUp.abort();
  await Promise.all(aScans);
  await eventually(() => dialer.stats.active === 0 && dialer.stats.waiting === 0);
  assert.deepEqual({ active: dialer.stats.active, waiting: dialer.stats.waiting }, { active: 0, waiting: 0 });
  assert.equal(silent.length, MAX_PER_OWNER_SOCKETS, 'nothing queued was dialled after the hang-up');
});

test("issue 24: four accounts' 20 scans of 1000 silent ports leave the reserve free; a fifth account's open port is answered before any of their ports", async (t) => {
  const { silent, silentBy, dialer } = silentDialer();
  const b = await build(t, { plan: 'enterprise', deps: { dialer } });
  const flooders = [b.token];
  for (const n of [2, 3, 4]) flooders.push((await b.accounts.createAccount({ email: `a${n}@example.com`, name: `A${n}`, plan: 'enterprise' })).token);
  const newcomer = await b.accounts.createAccount({ email: 'b@example.com', name: 'B', plan: 'free' });

  const ports = Array.from({ length: MAX_PORTS_PER_SCAN }, (_, i) => i + 1);
  const hangUp = new AbortController();
  const statuses: number[] = [];
  const scans = flooders.flatMap((token) =>
    Array.from({ length: A_SCANS / flooders.length }, () =>
      b
        .api('/api/port/scan-range', { json: { host: SILENT_HOST, ports, timeout: SILENT_TIMEOUT_S }, signal: hangUp.signal, token })
        .then((res) => void statuses.push(res.status))
        .catch((err: unknown) => {
          if (!hangUp.signal.aborted) throw err;
        }),
    ),
  );
  let held = 0;
  // However this test ends, the flooders hang up before the app closes.
  try {
    // Every flooder holds its few (each scan asks for 512 at once, so once one has them it has
    // asked for all it will get while none of its connects ends), and the unreserved part is full.
    const settled = (): boolean =>
      silentBy.size === flooders.length && [...silentBy.values()].every((n) => n >= RESERVED_BELOW_SOCKETS) && silent.length >= MAX_PER_OWNER_SOCKETS;
    await eventually(settled, { timeoutMs: 30_000 });
    assert.ok(settled(), `the four accounts' connects started: ${JSON.stringify([...silentBy.values()])}`);
    held = silent.length;
    // Only an account's first connects may come out of the reserve: at most its few each.
    assert.ok(held <= MAX_PER_OWNER_SOCKETS + (flooders.length - 1) * RESERVED_BELOW_SOCKETS, `${held} connects`);
    assert.ok(held < MAX_GLOBAL_SOCKETS, 'the reserve is not all taken');
    assert.deepEqual(statuses, [], 'all 20 scans run (5 per account, under the enterprise plan\'s 16)');

    const { connects: connectsWhenAnswered, answered: answeredWhenAnswered } = await scanOpenPort(b, newcomer.token, silent);
    // Order, not time: B's connect started and ended while not one of the flooders' 20,000 ports
    // had an answer (so it waited for none of their slots), and they started no connect meanwhile.
    assert.equal(answeredWhenAnswered, 0);
    assert.equal(connectsWhenAnswered, held);
  } finally {
    hangUp.abort();
    await Promise.all(scans);
  }
  await eventually(() => dialer.stats.active === 0 && dialer.stats.waiting === 0);
  assert.deepEqual({ active: dialer.stats.active, waiting: dialer.stats.waiting }, { active: 0, waiting: 0 });
  assert.equal(silent.length, held, 'nothing queued was dialled after the hang-up');
});
