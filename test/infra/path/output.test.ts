import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { PathToolError } from '../../../src/errors.js';
import { parseMtrJson } from '../../../src/infra/path/mtr-output.js';
import { parsePingLine, type PingLine } from '../../../src/infra/path/ping-output.js';
import { parseTracerouteLine } from '../../../src/infra/path/traceroute-output.js';
import { LAB_V4, LAB_V6 } from '../../helpers/netns.js';

/**
 * The parsers on what the programs really printed in the lab (test/fixtures/path-tools/record.ts
 * records them): client -> r1 -> r2 -> target. Only what the topology decides is checked
 * (addresses, which probes were answered, counts), never a round-trip time's value.
 */

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/path-tools/${name}.txt`, import.meta.url), 'utf8');
const lines = (name: string) => fixture(name).split('\n');
const LAB = { 4: LAB_V4, 6: LAB_V6 } as const;

function ping(name: string): { transmitted: number | null; replies: Array<Extract<PingLine, { kind: 'reply' }>['reply']> } {
  const parsed = lines(name).map(parsePingLine).filter((p) => p !== null);
  const transmitted = parsed.find((p) => p.kind === 'transmitted');
  return { transmitted: transmitted?.kind === 'transmitted' ? transmitted.count : null, replies: parsed.flatMap((p) => (p.kind === 'reply' ? [p.reply] : [])) };
}

function trace(name: string) {
  return lines(name).map(parseTracerouteLine).filter((h) => h !== null);
}

/** Each hop as [ttl, the addresses of its probes (null for *), their annotations]. */
function shape(name: string) {
  return trace(name).map((h) => [h.ttl, h.probes.map((p) => p?.address ?? null), h.probes.map((p) => p?.annotation ?? null)]);
}

for (const family of [4, 6] as const) {
  const v = `v${family}`;
  const at = LAB[family];

  test(`ping ${v}: four replies, seq 1-4, ttl 62 (two routers)`, () => {
    const { transmitted, replies } = ping(`ping-${v}`);
    assert.equal(transmitted, 4);
    assert.deepEqual(replies.map((r) => [r.seq, r.ttl, r.duplicate]), [[1, 62, false], [2, 62, false], [3, 62, false], [4, 62, false]]);
    for (const r of replies) assert.ok(r.rtt > 0 && Number.isFinite(r.rtt));
  });

  test(`ping ${v}: (DUP!) replies are marked duplicate`, () => {
    const { transmitted, replies } = ping(`ping-dup-${v}`);
    assert.equal(transmitted, 4);
    assert.deepEqual(replies.filter((r) => !r.duplicate).map((r) => r.seq), [1, 2, 3, 4]);
    assert.ok(replies.some((r) => r.duplicate));
    for (const d of replies.filter((r) => r.duplicate)) assert.ok(d.seq >= 1 && d.seq <= 4);
  });

  test(`ping ${v}: every second request dropped: replies to 1 and 3`, () => {
    const { transmitted, replies } = ping(`ping-half-loss-${v}`);
    assert.equal(transmitted, 4);
    assert.deepEqual(replies.map((r) => r.seq), [1, 3]);
  });

  test(`ping ${v}: a router's "Destination unreachable" is no reply`, () => {
    assert.match(fixture(`ping-unreachable-${v}`), /From /);
    const { transmitted, replies } = ping(`ping-unreachable-${v}`);
    assert.equal(transmitted, 4);
    assert.deepEqual(replies, []);
  });

  test(`ping ${v}: a target that never answers`, () => {
    const { transmitted, replies } = ping(`ping-silent-target-${v}`);
    assert.equal(transmitted, 3);
    assert.deepEqual(replies, []);
  });

  for (const protocol of ['icmp', 'udp', 'tcp']) {
    test(`traceroute ${protocol} ${v}: r1, r2, the target, three probes each`, () => {
      assert.deepEqual(shape(`traceroute-${protocol}-${v}`), [
        [1, [at.r1, at.r1, at.r1], [null, null, null]],
        [2, [at.r2, at.r2, at.r2], [null, null, null]],
        [3, [at.target, at.target, at.target], [null, null, null]],
      ]);
      for (const hop of trace(`traceroute-${protocol}-${v}`)) for (const p of hop.probes) assert.ok(p!.rtt >= 0);
    });
  }

  test(`traceroute ${v}: a silenced router is a hop of stars, the target still reached`, () => {
    assert.deepEqual(shape(`traceroute-silent-hop-${v}`), [
      [1, [null, null, null], [null, null, null]],
      [2, [at.r2, at.r2, at.r2], [null, null, null]],
      [3, [at.target, at.target, at.target], [null, null, null]],
    ]);
  });

  for (const [kind, note] of [['host', '!H'], ['net', '!N'], ['admin', '!X']] as const) {
    test(`traceroute ${v}: r2 rejecting (${note}) ends the trace at r2 with the annotation`, () => {
      assert.deepEqual(shape(`traceroute-reject-${kind}-${v}`), [
        [1, [at.r1, at.r1, at.r1], [null, null, null]],
        [2, [at.r2, at.r2, at.r2], [null, null, null]],
        [3, [at.r2, at.r2, at.r2], [note, note, note]],
      ]);
    });
  }

  test(`traceroute ${v}: a target that never answers: stars up to max_hops`, () => {
    const hops = shape(`traceroute-silent-target-${v}`);
    assert.deepEqual(hops.slice(0, 2).map((h) => h[1]), [[at.r1, at.r1, at.r1], [at.r2, at.r2, at.r2]]);
    assert.deepEqual(hops.slice(2), [3, 4, 5, 6].map((ttl) => [ttl, [null, null, null], [null, null, null]]));
  });

  test(`mtr ${v}: three hops, nothing lost`, () => {
    const hops = parseMtrJson(fixture(`mtr-icmp-${v}`));
    assert.deepEqual(hops.map((h) => [h.ttl, h.address, h.sent, h.received]), [[1, at.r1, 3, 3], [2, at.r2, 3, 3], [3, at.target, 3, 3]]);
    for (const h of hops) assert.ok(h.best <= h.avg && h.avg <= h.worst && h.stdev >= 0);
  });

  test(`mtr ${v}: a silenced router loses everything, the hops after it nothing`, () => {
    const hops = parseMtrJson(fixture(`mtr-silent-hop-${v}`));
    assert.deepEqual(hops.map((h) => [h.ttl, h.address, h.sent, h.received]), [[1, null, 3, 0], [2, at.r2, 3, 3], [3, at.target, 3, 3]]);
  });

  test(`mtr ${v}: a target that never answers is a last hop nobody answered`, () => {
    const hops = parseMtrJson(fixture(`mtr-silent-target-${v}`));
    assert.deepEqual(hops.map((h) => [h.ttl, h.address, h.received]), [[1, at.r1, 3], [2, at.r2, 3], [3, null, 0]]);
  });
}

test('mtr over udp (v6) and tcp (v4)', () => {
  assert.deepEqual(parseMtrJson(fixture('mtr-udp-v6')).map((h) => h.address), [LAB_V6.r1, LAB_V6.r2, LAB_V6.target]);
  assert.deepEqual(parseMtrJson(fixture('mtr-tcp-v4')).map((h) => h.address), [LAB_V4.r1, LAB_V4.r2, LAB_V4.target]);
});

test('no route: the programs print nothing on standard output, their complaint on standard error', () => {
  for (const tool of ['ping', 'traceroute', 'mtr']) {
    assert.equal(fixture(`${tool}-no-route-v6`), '');
    assert.match(readFileSync(new URL(`../../fixtures/path-tools/${tool}-no-route-v6.stderr.txt`, import.meta.url), 'utf8'), /Network is unreachable/);
  }
});

test('traceroute: several routers on one hop, each probe from the address named before it', () => {
  const hop = parseTracerouteLine(' 5  192.0.2.1  1.002 ms 192.0.2.9  2.013 ms *');
  assert.deepEqual(hop, {
    ttl: 5,
    probes: [{ address: '192.0.2.1', rtt: 1.002, annotation: null }, { address: '192.0.2.9', rtt: 2.013, annotation: null }, null],
  });
  assert.deepEqual(parseTracerouteLine('12  2001:DB8::1  7.5 ms !F-1500')?.probes, [{ address: '2001:db8::1', rtt: 7.5, annotation: '!F-1500' }]);
});

test('traceroute: lines that are not hops are not read as hops', () => {
  for (const line of [
    'traceroute to 10.200.3.2 (10.200.3.2), 30 hops max, 60 byte packets',
    '',
    ' 1  0.5 ms',
    ' 1  example.com  0.5 ms',
    ' 0  10.0.0.1  0.5 ms',
    ' 300  10.0.0.1  0.5 ms',
    ' 1  !H',
    ' 1  10.0.0.1  0.5 ms !H !N',
    ' 1  10.0.0.1  0.5 ms !' + 'X'.repeat(40),
    ' 1  10.0.0.1',
    ' 1  10.0.0.1  1e3 ms',
  ]) {
    assert.equal(parseTracerouteLine(line), null, line);
  }
});

test('ping: lines that are not replies are not read as replies', () => {
  for (const line of [
    'PING 10.200.3.2 (10.200.3.2) 56(84) bytes of data.',
    'From 10.200.2.2 icmp_seq=1 Destination Host Unreachable',
    '64 bytes from 10.0.0.1: icmp_seq=1 ttl=64 time=0.1 ms (BAD CHECKSUM!)',
    '64 bytes from 10.0.0.1: icmp_seq=x ttl=64 time=0.1 ms',
    '64 bytes from 10.0.0.1: icmp_seq=1 ttl=64',
    'rtt min/avg/max/mdev = 0.058/0.070/0.076/0.007 ms',
    'no answer yet for icmp_seq=2',
  ]) {
    assert.equal(parsePingLine(line), null, line);
  }
  assert.deepEqual(parsePingLine('64 bytes from 10.0.0.1: icmp_seq=7 ttl=64 time=1011 ms'), { kind: 'reply', reply: { seq: 7, ttl: 64, rtt: 1011, duplicate: false } });
});

test('mtr: anything but its report is an error naming what is wrong, never a guess', () => {
  const hub = { count: 1, host: '10.0.0.1', 'Loss%': 0, Drop: 0, Rcv: 1, Snt: 1, Last: 1, Best: 1, Avg: 1, Wrst: 1, StDev: 0 };
  const report = (hubs: unknown) => JSON.stringify({ report: { mtr: {}, hubs } });
  assert.deepEqual(parseMtrJson(report([{ ...hub, count: '1' }]))[0]!.ttl, 1);
  for (const [text, what] of [
    ['not json', /not JSON/],
    ['[]', /output is not an object/],
    [report('x'), /hubs is not a list/],
    [report([{ ...hub, host: 'example.com' }]), /host is not an address/],
    [report([{ ...hub, Snt: -1 }]), /Snt is not a count/],
    [report([{ ...hub, Avg: 'x' }]), /Avg is not a time/],
    [report([{ ...hub, count: 0 }]), /count is not a TTL/],
    [report(new Array(65).fill(hub)), /hubs is not a list/],
  ] as const) {
    assert.throws(() => parseMtrJson(text), (err: unknown) => err instanceof PathToolError && err.kind === 'failed' && what.test(err.message));
  }
});
