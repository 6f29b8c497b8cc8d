import assert from 'node:assert/strict';
import { test } from 'node:test';
import ipaddr from 'ipaddr.js';
import type { CheckedAddress, ResolveOptions } from '../../../src/domain/dialer.js';
import { PathTools, type PathToolsDeps } from '../../../src/domain/path/service.js';
import type {
  MtrHopLine,
  MtrRequest,
  PathToolRunner,
  PathToolsAvailability,
  PingReply,
  PingRequest,
  TraceHopLine,
  TracerouteRequest,
} from '../../../src/domain/path/types.js';
import { SocketBudget } from '../../../src/domain/socket-budget.js';
import { runAsOwner } from '../../../src/domain/owner.js';
import { PathToolError, PathToolUnavailableError, ResolveError, TargetForbiddenError, ValidationError } from '../../../src/errors.js';

/**
 * The path tools' service with a runner of the test's own (the programs are tested in
 * test/infra/path/): what it asks the runner, the items it tells, the statistics, the hops'
 * names and ASes, the 503s, the fair process budget.
 */

const ALL: PathToolsAvailability = {
  ping: { available: true, reason: null },
  traceroute: { available: true, reason: null, protocols: ['icmp', 'udp', 'tcp'] },
  mtr: { available: true, reason: null },
};

interface Script {
  availability?: PathToolsAvailability;
  ping?: { replies: PingReply[]; transmitted: number | null } | PathToolError;
  hops?: TraceHopLine[];
  mtr?: MtrHopLine[];
  /** The nth ping started runs until the nth of these settles (a process that is running). */
  gates?: Array<Promise<void>>;
}

function fakeRunner(script: Script): PathToolRunner & { asked: Array<PingRequest | TracerouteRequest | MtrRequest>; started: number } {
  const runner = {
    asked: [] as Array<PingRequest | TracerouteRequest | MtrRequest>,
    started: 0,
    availability: async () => script.availability ?? ALL,
    async ping(req: PingRequest, opts: { onReply?: (r: PingReply) => void }) {
      runner.asked.push(req);
      await script.gates?.[runner.started++];
      if (script.ping instanceof PathToolError) throw script.ping;
      const run = script.ping ?? { replies: [], transmitted: req.packets };
      for (const r of run.replies) opts.onReply?.(r);
      return run;
    },
    async traceroute(req: TracerouteRequest, opts: { onHop?: (h: TraceHopLine) => void }) {
      runner.asked.push(req);
      runner.started++;
      for (const h of script.hops ?? []) opts.onHop?.(h);
      return { hops: script.hops ?? [], unfinished: null };
    },
    async mtr(req: MtrRequest) {
      runner.asked.push(req);
      runner.started++;
      return { hops: script.mtr ?? [] };
    },
  };
  return runner;
}

const TARGET = '93.184.215.14';
const TARGET6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

function fakeDialer(opts: { forbid?: boolean; unresolvable?: boolean } = {}) {
  const asked: Array<ResolveOptions | undefined> = [];
  return {
    asked,
    async resolve(target: string, o?: ResolveOptions) {
      asked.push(o);
      if (opts.forbid) throw new TargetForbiddenError(target, '10.0.0.1', '10.0.0.0/8', 'private');
      if (opts.unresolvable) throw new ResolveError('ENOTFOUND', target, `${target} does not resolve (NXDOMAIN)`);
      const addresses = (o?.family === 6 ? [TARGET6] : o?.family === 4 ? [TARGET] : [TARGET, TARGET6]) as CheckedAddress[];
      return { target: target.trim(), hostname: 'example.com', addresses };
    },
  };
}

function tools(runner: PathToolRunner, extra: Partial<PathToolsDeps> = {}) {
  const dialer = fakeDialer();
  return { dialer, tools: new PathTools({ dialer, runner, processes: new SocketBudget(4), ...extra }) };
}

const reply = (seq: number, rtt: number, duplicate = false): PingReply => ({ seq, ttl: 55, rtt, duplicate });
const probe = (address: string, rtt: number, annotation: string | null = null) => ({ address, rtt, annotation });

test('ping: the checked address, samples as items when they arrive, the lost ones at the end, duplicates ignored', async () => {
  const runner = fakeRunner({ ping: { transmitted: 4, replies: [reply(1, 10.5), reply(1, 10.6, true), reply(3, 12.25), reply(4, 11)] } });
  const { tools: t, dialer } = tools(runner);
  const items: Array<[number, unknown]> = [];
  const result = await t.ping(' example.com ', { packets: 4 }, { onItem: (i, item) => items.push([i, item]) });
  assert.deepEqual(runner.asked, [{ address: TARGET, family: 4, packets: 4 }]);
  assert.deepEqual(dialer.asked, [{ field: 'target', family: 0 }]);
  assert.deepEqual(items, [
    [0, { seq: 1, ttl: 55, rtt: 10.5 }],
    [2, { seq: 3, ttl: 55, rtt: 12.25 }],
    [3, { seq: 4, ttl: 55, rtt: 11 }],
    [1, null],
  ]);
  assert.deepEqual(result, {
    target: 'example.com',
    address: TARGET,
    protocol: 'icmp',
    sent: 4,
    received: 3,
    loss_percent: 25,
    min: 10.5,
    avg: 11.25,
    max: 12.25,
    mdev: 0.736,
    samples: [{ seq: 1, ttl: 55, rtt: 10.5 }, null, { seq: 3, ttl: 55, rtt: 12.25 }, { seq: 4, ttl: 55, rtt: 11 }],
    error: null,
  });
});

test('ping: ip_version 6 resolves and pings IPv6 only', async () => {
  const runner = fakeRunner({});
  const { tools: t, dialer } = tools(runner);
  const result = await t.ping('example.com', { packets: 2, ip_version: 6 });
  assert.deepEqual(dialer.asked, [{ field: 'target', family: 6 }]);
  assert.deepEqual(runner.asked, [{ address: TARGET6, family: 6, packets: 2 }]);
  assert.deepEqual([result.sent, result.received, result.loss_percent, result.min, result.samples], [2, 0, 100, null, [null, null]]);
});

test('a target that does not resolve is a result saying so; nothing runs', async () => {
  const runner = fakeRunner({});
  const t = new PathTools({ dialer: fakeDialer({ unresolvable: true }), runner, processes: new SocketBudget(1) });
  const ping = await t.ping('nx.example', {});
  assert.deepEqual([ping.address, ping.sent, ping.loss_percent, ping.samples, ping.error], [null, 0, 100, [], 'nx.example does not resolve (NXDOMAIN)']);
  const trace = await t.traceroute('nx.example', {});
  assert.deepEqual([trace.address, trace.reached, trace.hops, trace.error], [null, false, [], 'nx.example does not resolve (NXDOMAIN)']);
  const mtr = await t.mtr('nx.example', {});
  assert.deepEqual([mtr.address, mtr.hops, mtr.error], [null, [], 'nx.example does not resolve (NXDOMAIN)']);
  assert.equal(runner.started, 0);
});

test('a forbidden target is a 403 before anything runs', async () => {
  const runner = fakeRunner({});
  const t = new PathTools({ dialer: fakeDialer({ forbid: true }), runner, processes: new SocketBudget(1) });
  await assert.rejects(t.ping('10.0.0.1', {}), TargetForbiddenError);
  await assert.rejects(t.traceroute('10.0.0.1', {}), TargetForbiddenError);
  await assert.rejects(t.mtr('10.0.0.1', {}), TargetForbiddenError);
  await assert.rejects(t.precheck('mtr', '10.0.0.1', {}), TargetForbiddenError);
  assert.equal(runner.started, 0);
});

test('bounds: a ValidationError naming the field, before anything is resolved', async () => {
  const { tools: t, dialer } = tools(fakeRunner({}));
  const cases: Array<[Promise<unknown>, string]> = [
    [t.ping('x', { packets: 0 }), 'packets'],
    [t.ping('x', { packets: 17 }), 'packets'],
    [t.ping('x', { ip_version: 5 as 4 }), 'ip_version'],
    [t.traceroute('x', { protocol: 'sctp' as 'udp' }), 'protocol'],
    [t.traceroute('x', { port: 0, protocol: 'udp' }), 'port'],
    [t.traceroute('x', { max_hops: 31 }), 'max_hops'],
    [t.traceroute('x', { queries: 4 }), 'queries'],
    [t.mtr('x', { packets: 1.5 }), 'packets'],
    [t.precheck('traceroute', 'x', { queries: 0 }), 'queries'],
  ];
  for (const [call, field] of cases) {
    await assert.rejects(call, (err: unknown) => err instanceof ValidationError && err.details?.field === field);
  }
  assert.equal(dialer.asked.length, 0);
});

test('a tool that cannot run here is a 503 naming what is missing; a traceroute protocol that works still runs', async () => {
  const availability: PathToolsAvailability = {
    ping: { available: false, reason: 'ping is not installed: no executable at /usr/bin/ping (install the Debian package iputils-ping)' },
    traceroute: { available: false, reason: 'traceroute may not open raw sockets, which icmp and tcp probes need', protocols: ['udp'] },
    mtr: { available: true, reason: null },
  };
  const runner = fakeRunner({ availability });
  const { tools: t } = tools(runner);
  await assert.rejects(t.ping('example.com', {}), (err: unknown) => {
    assert.ok(err instanceof PathToolUnavailableError);
    assert.equal(err.status, 503);
    assert.equal(err.message, 'ping is unavailable on this server: ping is not installed: no executable at /usr/bin/ping (install the Debian package iputils-ping)');
    return true;
  });
  await assert.rejects(t.traceroute('example.com', { protocol: 'tcp' }), /traceroute over tcp is unavailable on this server: traceroute may not open raw sockets/);
  await assert.rejects(t.precheck('traceroute', 'example.com', {}), PathToolUnavailableError);
  await t.precheck('traceroute', 'example.com', { protocol: 'udp' });
  const udp = await t.traceroute('example.com', { protocol: 'udp' });
  assert.equal(udp.protocol, 'udp');
  assert.deepEqual(runner.asked, [{ address: TARGET, family: 4, protocol: 'udp', port: 33434, maxHops: 30, queries: 3 }]);
});

test('no route from this server: the result says so', async () => {
  const { tools: t } = tools(fakeRunner({ ping: new PathToolError('ping', 'no_route', `this server has no route to ${TARGET6}`) }));
  const result = await t.ping('example.com', { ip_version: 6 });
  assert.deepEqual([result.address, result.sent, result.samples, result.error], [TARGET6, 0, [], `this server has no route to ${TARGET6}`]);
});

test('any other failure of a program is thrown (a 500)', async () => {
  const { tools: t } = tools(fakeRunner({ ping: new PathToolError('ping', 'failed', 'did not finish within 20 s and was stopped') }));
  await assert.rejects(t.ping('example.com', {}), (err: unknown) => err instanceof PathToolError && err.kind === 'failed');
});

test('traceroute: one hop per TTL, a silent hop null, names and ASes of public hops, reached', async () => {
  const hops: TraceHopLine[] = [
    { ttl: 1, probes: [probe('10.0.0.1', 0.5), probe('10.0.0.1', 0.4), probe('10.0.0.1', 0.45)] },
    { ttl: 2, probes: [null, null, null] },
    { ttl: 3, probes: [probe('62.115.0.7', 5), null, probe('62.115.0.9', 6)] },
    { ttl: 4, probes: [probe(TARGET, 9), probe(TARGET, 9.5), probe(TARGET, 9.25)] },
  ];
  const queries: string[] = [];
  const dns = {
    async query(name: string) {
      queries.push(name);
      if (name === '7.0.115.62.in-addr.arpa') return { status: 'NOERROR', records: [{ value: 'core1.example.net.' }] };
      return { status: 'NXDOMAIN', records: [] };
    },
  };
  const geo = { asn: (ip: string) => (ip === '62.115.0.7' ? { number: 64500, organization: 'EXAMPLE-NET', network: '62.115.0.0/24' } : null) };
  const runner = fakeRunner({ hops });
  const { tools: t } = tools(runner, { dns, geo });
  const items: Array<[number, unknown]> = [];
  const result = await t.traceroute('example.com', { protocol: 'tcp', max_hops: 10, queries: 3 }, { onItem: (i, h) => items.push([i, h]) });
  assert.deepEqual(runner.asked, [{ address: TARGET, family: 4, protocol: 'tcp', port: 80, maxHops: 10, queries: 3 }]);
  assert.deepEqual(result, {
    target: 'example.com',
    address: TARGET,
    protocol: 'tcp',
    reached: true,
    hops: [
      { ttl: 1, address: '10.0.0.1', hostname: null, asn: null, organization: null, network: null, rtts: [0.5, 0.4, 0.45] },
      { ttl: 2, address: null, hostname: null, asn: null, organization: null, network: null, rtts: [null, null, null] },
      { ttl: 3, address: '62.115.0.7', hostname: 'core1.example.net', asn: 64500, organization: 'EXAMPLE-NET', network: '62.115.0.0/24', rtts: [5, null, 6] },
      { ttl: 4, address: TARGET, hostname: null, asn: null, organization: null, network: null, rtts: [9, 9.5, 9.25] },
    ],
    error: null,
  });
  assert.deepEqual(items.map(([i]) => i).sort(), [0, 1, 2, 3]);
  for (const [i, hop] of items) assert.deepEqual(hop, result.hops[i]);
  // Private 10.0.0.1 is never asked about (no policy: public addresses only); each public one once.
  assert.deepEqual(queries.sort(), ['14.215.184.93.in-addr.arpa', '7.0.115.62.in-addr.arpa']);
});

test('traceroute: the target never answered: not reached', async () => {
  const { tools: t } = tools(fakeRunner({ hops: [{ ttl: 1, probes: [probe('10.0.0.1', 1)] }, { ttl: 2, probes: [null] }] }));
  const result = await t.traceroute('example.com', { max_hops: 2, queries: 1 });
  assert.equal(result.reached, false);
});

test('hop names follow the target policy when one is given; a PTR slower than its deadline is null', async () => {
  const asked: string[] = [];
  const policyChecked: string[] = [];
  const dns = {
    query: (name: string) => {
      asked.push(name);
      // 10.0.0.2 never answers.
      return name.startsWith('2.0.0.10') ? new Promise<never>(() => {}) : Promise.resolve({ status: 'NOERROR', records: [{ value: `${name}.ptr.` }] });
    },
  };
  const policy = {
    checkReverse(name: string, network: ipaddr.IPv4 | ipaddr.IPv6) {
      policyChecked.push(name);
      if (network.toString() === '10.9.9.9') throw new TargetForbiddenError(name, '10.9.9.9', '10.0.0.0/8', 'private');
    },
  };
  const hops: TraceHopLine[] = [
    { ttl: 1, probes: [probe('10.0.0.1', 1)] },
    { ttl: 2, probes: [probe('10.9.9.9', 1)] },
    { ttl: 3, probes: [probe('10.0.0.2', 1)] },
  ];
  const { tools: t } = tools(fakeRunner({ hops }), { dns, policy, ptrDeadlineMs: 20 });
  const result = await t.traceroute('example.com', { queries: 1 });
  assert.deepEqual(result.hops.map((h) => h.hostname), ['1.0.0.10.in-addr.arpa.ptr', null, null]);
  assert.ok(!asked.includes('9.9.9.10.in-addr.arpa'), 'a reverse name the policy forbids is never asked');
  assert.ok(policyChecked.includes('9.9.9.10.in-addr.arpa'));
});

test('mtr: loss per hop, times null where nothing came back', async () => {
  const line = (ttl: number, address: string | null, sent: number, received: number): MtrHopLine => ({ ttl, address, sent, received, last: 1.5, best: 1, avg: 1.25, worst: 1.5, stdev: 0.2 });
  const runner = fakeRunner({ mtr: [line(1, '10.0.0.1', 10, 10), line(2, null, 10, 0), line(3, TARGET, 3, 2)] });
  const { tools: t } = tools(runner);
  const items: number[] = [];
  const result = await t.mtr('example.com', { protocol: 'udp', packets: 10 }, { onItem: (i) => items.push(i) });
  assert.deepEqual(runner.asked, [{ address: TARGET, family: 4, protocol: 'udp', port: 33434, maxHops: 30, packets: 10 }]);
  assert.deepEqual(
    result.hops.map((h) => [h.ttl, h.address, h.sent, h.received, h.loss_percent, h.best]),
    [[1, '10.0.0.1', 10, 10, 0, 1], [2, null, 10, 0, 100, null], [3, TARGET, 3, 2, 33.33, 1]],
  );
  assert.deepEqual(result.hops[1], { ttl: 2, address: null, hostname: null, asn: null, organization: null, network: null, sent: 10, received: 0, loss_percent: 100, last: null, best: null, avg: null, worst: null, stdev: null });
  assert.deepEqual(items.sort(), [0, 1, 2]);
});

test('the process budget: a call waits for a slot, the owner running fewer goes first, an abort leaves the queue', async () => {
  const opens: Array<() => void> = [];
  const gates = Array.from({ length: 4 }, () => new Promise<void>((r) => opens.push(r)));
  const runner = fakeRunner({ gates });
  const processes = new SocketBudget(2);
  const t = new PathTools({ dialer: fakeDialer(), runner, processes });
  const tick = () => new Promise<void>((r) => setImmediate(r));
  // 'a' runs two (the owner comes from runAsOwner, as a route's handler sets it), then asks a third.
  const a1 = runAsOwner('a', () => t.ping('example.com', { packets: 1 }));
  const a2 = runAsOwner('a', () => t.ping('example.com', { packets: 1 }));
  await tick();
  assert.equal(runner.started, 2);
  const order: string[] = [];
  const a3 = runAsOwner('a', () => t.ping('example.com', { packets: 1 })).then(() => order.push('a'));
  await tick();
  const b1 = t.ping('example.com', { packets: 1 }, { owner: 'b' }).then(() => order.push('b'));
  const controller = new AbortController();
  const gone = t.ping('example.com', { packets: 1 }, { owner: 'c', signal: controller.signal });
  await tick();
  assert.equal(runner.started, 2, 'two processes at once');
  assert.equal(processes.waiting, 3);
  controller.abort(new Error('client gone'));
  await assert.rejects(gone, /client gone/);
  assert.equal(processes.waiting, 2);
  // One of a's ends: the slot goes to b, who runs none, though a asked first.
  opens[0]!();
  await a1;
  await tick();
  assert.equal(runner.started, 3);
  assert.equal(processes.heldBy('b'), 1);
  assert.equal(processes.heldBy('a'), 1);
  opens[2]!();
  await b1;
  opens[1]!();
  opens[3]!();
  await Promise.all([a2, a3]);
  assert.deepEqual(order, ['b', 'a']);
  assert.equal(processes.active, 0);
});
