import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { PathTools } from '../../../src/domain/path/service.js';
import { PathToolError, ResolveError, TargetForbiddenError } from '../../../src/errors.js';
import { Dialer, TargetPolicy } from '../../../src/infra/net/index.js';
import { createPathTools, PathRunner, type PathRunnerOptions, type SpawnFn } from '../../../src/infra/path/index.js';
import { createLab, firewallUnavailable, LAB_V4, LAB_V6, labUnavailable, type Lab } from '../../helpers/netns.js';

/**
 * The path tools on a real routed network (test/helpers/netns.ts): client -> r1 -> r2 -> target,
 * IPv4 and IPv6, the programs run inside the client's namespace through the runner's spawn seam.
 * The truth is the topology: the hops are r1, r2 and the target, in that order; a router told
 * not to send "time exceeded" is a hop nobody answered; a router dropping every second echo
 * request halves what ping gets back. Nothing leaves the namespaces (they have no link out);
 * the unprivileged availability checks probe 127.0.0.1 only.
 */

const PROGRAMS = { ping: '/usr/bin/ping', traceroute: ['/usr/sbin/traceroute', '/usr/bin/traceroute'].find(existsSync), mtr: '/usr/bin/mtr' };
const missing = Object.entries(PROGRAMS).filter(([, path]) => path === undefined || !existsSync(path)).map(([tool]) => tool);
const skip = labUnavailable() ?? (missing.length > 0 ? `needs ${missing.join(', ')} (Debian packages iputils-ping, traceroute, mtr-tiny)` : null);
const skipFirewall = skip ?? firewallUnavailable();

const AT = { 4: LAB_V4, 6: LAB_V6 } as const;

/** The service as compose would build it, with the lab's ranges allowed as targets and the programs run in the client's namespace. */
function pathTools(lab: Lab, runner: PathRunnerOptions = {}): { tools: PathTools; spawned: ChildProcess[] } {
  const spawned: ChildProcess[] = [];
  const inClient = lab.spawnIn('client');
  const dialer = new Dialer({
    policy: new TargetPolicy(['10.200.0.0/16', 'fd00:200::/32']),
    // The targets are addresses: nothing is ever resolved.
    resolver: { resolve: async (name) => Promise.reject(new ResolveError('ENOTFOUND', name, `${name} is not resolved here`)) },
  });
  const spawnFn: SpawnFn = (file, args, options) => {
    const child = inClient(file, args, options);
    spawned.push(child);
    return child;
  };
  return { tools: createPathTools({ dialer, runner: { spawn: spawnFn, ...runner } }), spawned };
}

async function labFor(t: TestContext, setup: (lab: Lab) => Promise<void> = async () => {}): Promise<Lab> {
  const lab = await createLab();
  t.after(() => lab.destroy());
  await setup(lab);
  return lab;
}

describe('path tools in a four-namespace lab', { skip: skip ?? false, concurrency: true }, () => {
  test('a clean path: traceroute over icmp, udp and tcp, ping and mtr, IPv4 and IPv6', async (t) => {
    const lab = await labFor(t);
    const { tools } = pathTools(lab);
    assert.deepEqual(await tools.availability(), {
      ping: { available: true, reason: null },
      traceroute: { available: true, reason: null, protocols: ['icmp', 'udp', 'tcp'] },
      mtr: { available: true, reason: null },
    });
    const runs: Array<Promise<void>> = [];
    for (const family of [4, 6] as const) {
      const at = AT[family];
      for (const protocol of ['icmp', 'udp', 'tcp'] as const) {
        runs.push(
          (async () => {
            const items = new Map<number, unknown>();
            const trace = await tools.traceroute(at.target, { protocol, queries: 3 }, { onItem: (i, hop) => items.set(i, hop) });
            const what = `traceroute ${protocol} v${family}`;
            assert.equal(trace.reached, true, what);
            assert.equal(trace.address, at.target, what);
            assert.deepEqual(trace.hops.map((h) => [h.ttl, h.address]), [[1, at.r1], [2, at.r2], [3, at.target]], what);
            for (const hop of trace.hops) {
              assert.equal(hop.rtts.length, 3, what);
              assert.ok(hop.rtts.every((r) => r !== null && r >= 0), what);
              // Private hops: no name asked, no AS.
              assert.deepEqual([hop.hostname, hop.asn, hop.organization, hop.network], [null, null, null, null], what);
            }
            assert.deepEqual([...items.keys()].sort(), [0, 1, 2], what);
            for (const [i, hop] of items) assert.deepEqual(hop, trace.hops[i], what);
          })(),
        );
      }
      runs.push(
        (async () => {
          const ping = await tools.ping(at.target, { packets: 3 });
          assert.deepEqual([ping.address, ping.sent, ping.received, ping.loss_percent, ping.error], [at.target, 3, 3, 0, null]);
          assert.deepEqual(ping.samples.map((s) => [s?.seq, s?.ttl]), [[1, 62], [2, 62], [3, 62]]);
          assert.ok(ping.min! <= ping.avg! && ping.avg! <= ping.max!);
        })(),
      );
    }
    runs.push(
      (async () => {
        const mtr = await tools.mtr(LAB_V4.target, { packets: 2, protocol: 'tcp', port: 80 });
        assert.deepEqual(mtr.hops.map((h) => [h.ttl, h.address, h.sent, h.received, h.loss_percent]), [[1, LAB_V4.r1, 2, 2, 0], [2, LAB_V4.r2, 2, 2, 0], [3, LAB_V4.target, 2, 2, 0]]);
      })(),
    );
    await Promise.all(runs);
  });

  test('a silenced router: a hop with no address and no times, the target still reached; mtr 100 % lost there, 0 % after', { skip: skipFirewall ?? false }, async (t) => {
    const lab = await labFor(t, (l) => l.silence('r1'));
    const { tools } = pathTools(lab);
    await Promise.all(
      ([4, 6] as const).flatMap((family) => {
        const at = AT[family];
        return [
          (async () => {
            const trace = await tools.traceroute(at.target, { protocol: 'icmp' });
            assert.equal(trace.reached, true);
            assert.deepEqual(trace.hops.map((h) => [h.ttl, h.address]), [[1, null], [2, at.r2], [3, at.target]]);
            assert.deepEqual(trace.hops[0]!.rtts, [null, null, null]);
          })(),
          (async () => {
            const mtr = await tools.mtr(at.target, { packets: 3 });
            assert.deepEqual(
              mtr.hops.map((h) => [h.ttl, h.address, h.loss_percent]),
              [[1, null, 100], [2, at.r2, 0], [3, at.target, 0]],
              `mtr v${family}`,
            );
            assert.deepEqual([mtr.hops[0]!.best, mtr.hops[0]!.avg, mtr.hops[0]!.stdev], [null, null, null]);
          })(),
        ];
      }),
    );
  });

  test('a router dropping every second echo request: ping loses half; duplicates are not samples', { skip: skipFirewall ?? false }, async (t) => {
    const halved = await labFor(t, (l) => l.dropEverySecondEcho('r1'));
    const doubled = await labFor(t, (l) => l.duplicateEchoes());
    await Promise.all(
      ([4, 6] as const).flatMap((family) => [
        (async () => {
          const items: Array<[number, unknown]> = [];
          const ping = await pathTools(halved).tools.ping(AT[family].target, { packets: 4 }, { onItem: (i, s) => items.push([i, s]) });
          assert.deepEqual([ping.sent, ping.received, ping.loss_percent], [4, 2, 50], `v${family}`);
          assert.deepEqual(ping.samples.map((s) => s?.seq ?? null), [1, null, 3, null]);
          assert.deepEqual(items.map(([i, s]) => [i, s === null]).sort(), [[0, false], [1, true], [2, false], [3, true]]);
        })(),
        (async () => {
          const ping = await pathTools(doubled).tools.ping(AT[family].target, { packets: 4 });
          assert.deepEqual([ping.sent, ping.received, ping.loss_percent], [4, 4, 0], `v${family}`);
          assert.deepEqual(ping.samples.map((s) => s?.seq), [1, 2, 3, 4]);
        })(),
      ]),
    );
  });

  test('a target that never answers, a router that rejects (!H), no route at all', { skip: skipFirewall ?? false }, async (t) => {
    const silent = await labFor(t, (l) => l.silenceTarget());
    const rejecting = await labFor(t, (l) => l.reject('host'));
    await Promise.all([
      (async () => {
        const { tools } = pathTools(silent);
        const trace = await tools.traceroute(LAB_V4.target, { max_hops: 4, queries: 1 });
        assert.equal(trace.reached, false);
        assert.deepEqual(trace.hops.map((h) => [h.ttl, h.address, h.rtts.length]), [[1, LAB_V4.r1, 1], [2, LAB_V4.r2, 1], [3, null, 1], [4, null, 1]]);
        const ping = await tools.ping(LAB_V4.target, { packets: 2 });
        assert.deepEqual([ping.sent, ping.received, ping.loss_percent, ping.min, ping.samples], [2, 0, 100, null, [null, null]]);
      })(),
      (async () => {
        const { tools } = pathTools(rejecting);
        const trace = await tools.traceroute(LAB_V6.target, { protocol: 'udp' });
        assert.equal(trace.reached, false);
        assert.deepEqual(trace.hops.map((h) => h.address), [LAB_V6.r1, LAB_V6.r2, LAB_V6.r2]);
        const ping = await tools.ping(LAB_V4.target, { packets: 2 });
        assert.deepEqual([ping.received, ping.samples], [0, [null, null]]);
      })(),
      (async () => {
        await silent.exec('client', 'ip', ['-6', 'route', 'del', 'default']);
        const { tools } = pathTools(silent);
        const expected = `this server has no route to ${LAB_V6.target}`;
        assert.deepEqual((await tools.ping(LAB_V6.target, {})).error, expected);
        assert.deepEqual((await tools.traceroute(LAB_V6.target, {})).error, expected);
        assert.deepEqual((await tools.mtr(LAB_V6.target, { packets: 1 })).error, expected);
      })(),
    ]);
  });

  test('a forbidden target is refused before any program runs', async (t) => {
    const lab = await labFor(t);
    const { tools, spawned } = pathTools(lab);
    await tools.availability();
    const before = spawned.length;
    await assert.rejects(tools.traceroute('10.201.0.1', {}), TargetForbiddenError);
    await assert.rejects(tools.ping('127.0.0.1', {}), TargetForbiddenError);
    assert.equal(spawned.length, before);
  });

  test('an abort kills the program at once; a deadline stops traceroute with the hops it printed', { skip: skipFirewall ?? false }, async (t) => {
    const lab = await labFor(t, (l) => l.silenceTarget());
    const { tools, spawned } = pathTools(lab, { deadlinesMs: { traceroute: 5_000 } });
    await tools.availability();
    const controller = new AbortController();
    const aborted = tools.traceroute(LAB_V4.target, { queries: 1 }, { signal: controller.signal, onItem: () => controller.abort(new Error('client gone')) });
    await assert.rejects(aborted, /client gone/);
    const child = spawned.at(-1)!;
    assert.ok(child.exitCode !== null || child.signalCode !== null, 'traceroute is gone when the call settles');

    const stopped = await tools.traceroute(LAB_V4.target, { queries: 1 });
    assert.equal(stopped.reached, false);
    assert.match(stopped.error!, /did not finish within 5 s; the hops it printed by then are shown/);
    assert.deepEqual(stopped.hops.slice(0, 2).map((h) => h.address), [LAB_V4.r1, LAB_V4.r2]);
    assert.ok(stopped.hops.length < 30);
  });
});

describe('availability without privileges', { skip: skip ?? false }, () => {
  // A copy of ping without its file capability, run as nobody: it may not open any ICMP socket,
  // unless the namespace's ping_group_range lets nobody's group open ICMP datagram sockets.
  let dir = '';
  let plainPing = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-ping-'));
    chmodSync(dir, 0o755);
    plainPing = join(dir, 'ping');
    copyFileSync(PROGRAMS.ping, plainPing);
    chmodSync(plainPing, 0o755);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const asNobody: SpawnFn = (file, args, options) => spawn(file, args, { ...options, uid: 65534, gid: 65534 });

  test('ping without the privilege, traceroute without raw sockets: unavailable, saying what to grant', async () => {
    const runner = new PathRunner({ spawn: asNobody, programs: { ping: plainPing, traceroute: '/usr/bin/traceroute.db' } });
    const report = await runner.availability();
    assert.equal(report.ping.available, false);
    assert.match(report.ping.reason!, /^ping may not send ICMP echo requests \(.*Operation not permitted.*\): give it CAP_NET_RAW \(setcap cap_net_raw\+ep .*\/ping\), run netdiag as root, or let netdiag's group open ICMP sockets \(sysctl net\.ipv4\.ping_group_range=/);
    assert.equal(report.traceroute.available, false);
    assert.deepEqual(report.traceroute.protocols, ['udp']);
    assert.match(report.traceroute.reason!, /icmp and tcp probes need .*setcap cap_net_raw\+ep \/usr\/bin\/traceroute\.db.*; udp probes work/);
    // mtr-packet carries its capability (the mtr-tiny package sets it).
    assert.deepEqual(report.mtr, { available: true, reason: null });

    // The service answers 503 naming it, and runs what does work.
    const dialer = new Dialer({ policy: new TargetPolicy(['127.0.0.0/8']), resolver: { resolve: async () => [] } });
    const tools = createPathTools({ dialer, runner: { spawn: asNobody, programs: { ping: plainPing, traceroute: '/usr/bin/traceroute.db' } } });
    await assert.rejects(tools.ping('127.0.0.1', {}), (err: unknown) => (err as { status?: number }).status === 503 && /^ping is unavailable on this server: ping may not send/.test((err as Error).message));
    await assert.rejects(tools.traceroute('127.0.0.1', { protocol: 'icmp' }), /traceroute over icmp is unavailable on this server/);
    const udp = await tools.traceroute('127.0.0.1', { protocol: 'udp', max_hops: 2, queries: 1 });
    assert.deepEqual([udp.reached, udp.hops.map((h) => h.address)], [true, ['127.0.0.1']]);
  });

  test('a program that is missing, or is not the one whose output is read', async () => {
    const runner = new PathRunner({ programs: { ping: '/nonexistent/ping', traceroute: '/bin/true' } });
    const report = await runner.availability();
    assert.deepEqual(report.ping, { available: false, reason: 'ping is not installed: no executable at /nonexistent/ping (install the Debian package iputils-ping)' });
    assert.deepEqual(report.traceroute, { available: false, reason: '/bin/true is not Modern traceroute for Linux (the Debian package traceroute), whose output netdiag reads', protocols: [] });
  });

  test('ping_group_range lets an unprivileged ping send echo requests', async (t) => {
    const lab = await labFor(t);
    await lab.exec('client', 'sysctl', ['-q', '-w', 'net.ipv4.ping_group_range=65534 65534']);
    const inClient = lab.spawnIn('client');
    const nobodyInClient: SpawnFn = (file, args, options) => inClient('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', file, ...args], options);
    const runner = new PathRunner({ spawn: nobodyInClient, programs: { ping: plainPing } });
    assert.deepEqual((await runner.availability()).ping, { available: true, reason: null });
    const run = await runner.ping({ address: LAB_V4.target as never, family: 4, packets: 1 }, {});
    assert.deepEqual(run.replies.map((r) => r.seq), [1]);
  });
});

test('a failure of the program itself is PathToolError, never a result', { skip: skip ?? false }, async () => {
  // A program that exits with an error the runner does not know (here: false, as mtr).
  const runner = new PathRunner({ programs: { mtr: '/bin/false' } });
  await assert.rejects(
    runner.mtr({ address: '127.0.0.1' as never, family: 4, protocol: 'icmp', port: 33434, maxHops: 1, packets: 1 }, {}),
    (err: unknown) => err instanceof PathToolError && err.kind === 'failed' && err.reason === 'exit code 1',
  );
});
