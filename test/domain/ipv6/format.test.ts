import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { expand, validate } from '../../../src/domain/ipv6/index.js';
import { ValidationError } from '../../../src/errors.js';

/**
 * An independent reference, written from RFC 4291 section 2.2 and RFC 5952 sections 4-5,
 * sharing no code with the implementation and not using ipaddr.js.
 */
const ref = {
  expanded(groups: number[]): string {
    return groups.map((g) => g.toString(16).padStart(4, '0')).join(':');
  },
  compressed(groups: number[]): string {
    // RFC 5952 section 5: IPv4-mapped addresses keep their IPv4 in dotted decimal.
    const mapped = groups[0] === 0 && groups[1] === 0 && groups[2] === 0 && groups[3] === 0 && groups[4] === 0;
    if (mapped && groups[5] === 0xffff) {
      const [a, b] = [groups[6]!, groups[7]!];
      return `::ffff:${a >>> 8}.${a & 255}.${b >>> 8}.${b & 255}`;
    }
    // 4.2.1-4.2.3: the longest run of at least two zero groups, the first of equals.
    let runStart = -1;
    let runLength = 0;
    let i = 0;
    while (i < 8) {
      let j = i;
      while (j < 8 && groups[j] === 0) j += 1;
      if (j - i >= 2 && j - i > runLength) {
        runStart = i;
        runLength = j - i;
      }
      i = j === i ? i + 1 : j;
    }
    // 4.1 and 4.3: no leading zeros, lowercase.
    const text = groups.map((g) => g.toString(16));
    if (runStart === -1) return text.join(':');
    const left = text.slice(0, runStart).join(':');
    const right = text.slice(runStart + runLength).join(':');
    return `${left}::${right}`;
  },
  /** RFC 4291 text to groups, as plainly as possible, to prove the generator writes what it means. */
  parse(text: string): number[] {
    const noZone = text.split('%')[0]!;
    let body = noZone;
    const tail: number[] = [];
    const lastColon = body.lastIndexOf(':');
    const lastPiece = body.slice(lastColon + 1);
    if (lastPiece.includes('.')) {
      const o = lastPiece.split('.').map((x) => Number.parseInt(x, 10));
      tail.push(o[0]! * 256 + o[1]!, o[2]! * 256 + o[3]!);
      body = body.slice(0, lastColon + 1);
      if (body.endsWith(':') && !body.endsWith('::')) body = body.slice(0, -1);
    }
    const hex = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => Number.parseInt(g, 16)));
    if (body.includes('::')) {
      const [l, r] = body.split('::');
      const left = hex(l!);
      const right = hex(r!);
      const zeros = 8 - tail.length - left.length - right.length;
      return [...left, ...Array<number>(zeros).fill(0), ...right, ...tail];
    }
    return [...hex(body), ...tail];
  },
};

/** Small seeded PRNG (mulberry32) so a failure can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function randomGroups(r: () => number): number[] {
  const mapped = r() < 0.08;
  const groups = Array.from({ length: 8 }, () => {
    const x = r();
    if (x < 0.45) return 0;
    if (x < 0.6) return Math.floor(r() * 16);
    if (x < 0.7) return Math.floor(r() * 256);
    return Math.floor(r() * 65536);
  });
  if (mapped) groups.splice(0, 6, 0, 0, 0, 0, 0, 0xffff);
  return groups;
}

/** Writes the groups the way a person might: any zero run (even one group) as '::', padding, case, IPv4 tail. */
function randomSpelling(groups: number[], r: () => number): string {
  const v4 = r() < 0.25;
  const hexCount = v4 ? 6 : 8;
  const pieces = groups.slice(0, hexCount).map((g) => {
    let s = g.toString(16);
    const pad = Math.floor(r() * (5 - s.length));
    s = '0'.repeat(pad) + s;
    return r() < 0.3 ? s.toUpperCase() : s;
  });
  const zeroRuns: Array<[number, number]> = [];
  for (let i = 0; i < hexCount; i++) {
    for (let j = i; j < hexCount && groups[j] === 0; j++) zeroRuns.push([i, j + 1]);
  }
  let text: string;
  if (zeroRuns.length > 0 && r() < 0.8) {
    const [s, e] = zeroRuns[Math.floor(r() * zeroRuns.length)]!;
    const left = pieces.slice(0, s).join(':');
    const right = pieces.slice(e).join(':');
    text = `${left}::${right}`;
  } else {
    text = pieces.join(':');
  }
  if (v4) {
    const [a, b] = [groups[6]!, groups[7]!];
    const quad = `${a >>> 8}.${a & 255}.${b >>> 8}.${b & 255}`;
    text = text.endsWith('::') ? text + quad : `${text}:${quad}`;
  }
  return text;
}

const EDGE_CASES = [
  '::',
  '::1',
  '1::',
  '1:2:3:4:5:6:7::',
  '::2:3:4:5:6:7:8',
  '1:2:3:4:5:6:7:8',
  '0:0:0:0:0:0:0:0',
  '1:0:0:1:0:0:0:1',
  '1:0:0:1:1:0:0:1',
  '1:0:1:1:1:1:1:1',
  '1:0:0:0:1:0:0:0',
  'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  'FFFF:0ABC::00DE',
  '::ffff:1.2.3.4',
  '::ffff:0.0.0.0',
  '::ffff:0:0',
  '::ffff:7f00:1',
  '::1.2.3.4',
  '::0.0.0.1',
  '64:ff9b::1.2.3.4',
  '1:2:3:4:5:6:1.2.3.4',
  '1::1.2.3.4',
  '2001:db8::',
  '2001:DB8:0:0:1::1',
  '2001:0db8:0000:0000:0000:0000:0000:0001',
  'fe80::',
  '0:0:0:0:0:ffff:c000:280',
];

describe('expand agrees with an RFC 4291/5952 reference', () => {
  test('edge cases', () => {
    for (const text of EDGE_CASES) {
      const groups = ref.parse(text);
      assert.equal(groups.length, 8, text);
      const out = expand(text);
      assert.deepEqual(out, { ipv6: text, expanded: ref.expanded(groups), compressed: ref.compressed(groups) }, text);
    }
  });

  test('10,000 random addresses in random spellings', () => {
    const r = rng(20240601);
    let checked = 0;
    for (let n = 0; n < 10_000; n++) {
      const groups = randomGroups(r);
      const zone = r() < 0.05 ? `eth${Math.floor(r() * 4)}` : null;
      const spelled = randomSpelling(groups, r);
      const text = zone === null ? spelled : `${spelled}%${zone}`;
      // Guards the generator: what it wrote must mean the groups it started from.
      assert.deepEqual(ref.parse(text), groups, `generator wrote ${text} for ${ref.expanded(groups)}`);
      const out = expand(text);
      const z = zone === null ? '' : `%${zone}`;
      assert.equal(out.expanded, ref.expanded(groups) + z, text);
      assert.equal(out.compressed, ref.compressed(groups) + z, text);
      // The compressed form is itself a valid spelling of the same address.
      assert.equal(expand(out.compressed).expanded, out.expanded, text);
      checked++;
    }
    assert.equal(checked, 10_000);
  });

  test('an invalid address is a ValidationError on ipv6', () => {
    assert.throws(
      () => expand('1::2::3'),
      (e: unknown) => e instanceof ValidationError && e.details?.field === 'ipv6' && /^ipv6: /.test(e.message),
    );
  });
});

describe('validate: the RFC 4291 grammar', () => {
  const VALID = [
    '::',
    '1::',
    '::1',
    '1:2:3:4:5:6:7::',
    '::2:3:4:5:6:7:8',
    '::ffff:1.2.3.4',
    '1:2:3:4:5:6:1.2.3.4',
    'fe80::1%eth0',
    'fe80::1%25',
    'ABCD::EF',
    '2001:0db8:85a3:0000:0000:8a2e:0370:7334',
  ];
  const INVALID = [
    '12345::',
    '1:2:3:4:5:6:7:8:9',
    '::ffff:1.2.3.256',
    'g::1',
    ':::',
    '1::2::3',
    '',
    '1:2:3:4:5:6:7',
    ':1::',
    '1::2:',
    ':1:2:3:4:5:6:7:8',
    '1:2:3:4:5:6:7:8:',
    '1:2:3:4:5:6:7:8::',
    '::1:2:3:4:5:6:7:8',
    '1.2.3.4',
    '::1.2.3',
    '::01.2.3.4',
    '1.2.3.4::',
    '1:2:3:4:5:6:7:1.2.3.4',
    'fe80::1%',
    '%eth0',
    'fe80::1%eth 0',
    '[::1]',
    ' ::1',
    '::1 ',
    '1:2:3:4:5:6::7:8:9',
  ];

  for (const text of VALID) {
    test(`${JSON.stringify(text)} is valid`, () => {
      const v = validate(text);
      assert.equal(v.valid, true, v.reason ?? '');
      assert.equal(v.reason, null);
      assert.equal(v.ipv6, text);
      assert.equal(typeof v.type, 'string');
      assert.equal(v.expanded?.split('%')[0]?.length, 39);
    });
  }
  for (const text of INVALID) {
    test(`${JSON.stringify(text)} is invalid, with a reason`, () => {
      const v = validate(text);
      assert.equal(v.valid, false);
      assert.equal(v.ipv6, text);
      assert.equal(typeof v.reason, 'string');
      assert.ok(v.reason!.length > 5, v.reason!);
      assert.deepEqual([v.type, v.compressed, v.expanded], [null, null, null]);
    });
  }

  test('reasons say what is wrong', () => {
    assert.match(validate('12345::').reason!, /more than 4 hex digits/);
    assert.match(validate('1::2::3').reason!, /only once/);
    assert.match(validate('g::1').reason!, /"g".*not a hexadecimal digit/);
    assert.match(validate('::ffff:1.2.3.256').reason!, /0-255/);
    assert.match(validate('1:2:3:4:5:6:7:8:9').reason!, /too many groups/);
    assert.match(validate('1.2.3.4').reason!, /IPv4/);
  });

  test('type, compressed and expanded of valid addresses', () => {
    assert.deepEqual(validate('FE80:0000::0001%eth0'), {
      ipv6: 'FE80:0000::0001%eth0',
      valid: true,
      type: 'link_local',
      compressed: 'fe80::1%eth0',
      expanded: 'fe80:0000:0000:0000:0000:0000:0000:0001%eth0',
      reason: null,
    });
    assert.equal(validate('::1').type, 'loopback');
    assert.equal(validate('2606:4700::1111').type, 'public');
    assert.equal(validate('2001:db8::1').type, 'documentation');
    assert.equal(validate('::ffff:10.0.0.1').type, 'private');
    assert.equal(validate('fd00::1').type, 'unique_local');
    assert.equal(validate('ff02::1').type, 'multicast');
    assert.equal(validate('::').type, 'unspecified');
  });
});
