import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressesIn } from '../../src/domain/proxy/anonymity.js';
import { normalizeAddress } from '../../src/domain/proxy/judge.js';
import { keyLine, withoutTrailingNewlines, withoutTrailingTag, withoutUrls } from '../../src/domain/whois/text.js';
import ipaddr from 'ipaddr.js';

/**
 * The hand-written scanners replace regular expressions that were quadratic on long input
 * (issue 14). On short input those expressions are fast, so they serve here as the reference:
 * every scanner must give exactly what its old expression gave, on many generated strings made
 * of the characters that matter to it.
 */

/** Deterministic: the same strings on every run (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function strings(seed: number, count: number, maxLength: number, pieces: readonly string[]): string[] {
  const next = random(seed);
  const out: string[] = [];
  for (let n = 0; n < count; n++) {
    let s = '';
    const length = Math.floor(next() * maxLength);
    for (let i = 0; i < length; i++) s += pieces[Math.floor(next() * pieces.length)]!;
    out.push(s);
  }
  return out;
}

const CASES = 20_000;

test('keyLine reads the lines the old KEY_LINE regex matched, with the same groups', () => {
  const OLD = /^(\s*)([A-Za-z][A-Za-z0-9 ._/()&'-]{0,79}?)\s*:(?:\s+(.*))?$/;
  const pieces = [' ', '  ', '\t', ':', 'a', 'Z', 'Registrar', ' Name', '9', '.', '_', '/', '(', ')', '&', "'", '-', '#', 'é', '\u00a0', '\u2028', '\r', 'x'.repeat(40), 'https://e.x', '10:20'];
  // Half of them start like a key, so that many match and the groups are compared.
  const inputs = [...strings(1, CASES, 12, pieces), ...strings(11, CASES, 8, pieces).map((s, i) => `${['', ' ', '\t', '   '][i % 4]}K${s}`), 'Domain Name: EXAMPLE.COM', '   Registered on: 01-Aug-1995', 'Relevant dates:', 'a'.repeat(80) + ':', 'a'.repeat(81) + ':', 'Key :value', 'Key\t: v\u2028x'];
  for (const line of inputs) {
    const m = OLD.exec(line);
    const got = keyLine(line);
    const want = m ? { indent: m[1]!, key: m[2]!, value: m[3] ?? '' } : null;
    // The old value group started after the colon's white space; with none after it, it was absent.
    assert.deepEqual(got === null ? null : { ...got, value: m && m[3] === undefined ? '' : got.value }, want, JSON.stringify(line));
  }
});

test('withoutUrls removes what the old URL regex removed', () => {
  const OLD = /\(?\s*https?:\/\/\S*\)?/gi;
  const pieces = [' ', '\t', '(', ')', 'http://', 'HTTPS://', 'https:/', 'ok', 'x', '#', 'h', 'ttp://', 's://'];
  for (const value of [...strings(2, CASES, 10, pieces), 'clientTransferProhibited https://icann.org/epp#clientTransferProhibited', 'ok (https://www.icann.org/epp#ok)']) {
    assert.equal(withoutUrls(value), value.replace(OLD, ''), JSON.stringify(value));
  }
});

test('withoutTrailingTag removes what the old [Tag = ...] regex removed', () => {
  const OLD = /\s*\[tag\s*=[^\]]*\]\s*$/i;
  const pieces = [' ', '\t', '[', ']', '[tag', '[TAG', '=', ' = ', 'x', 'Ltd', 'tag'];
  for (const value of [...strings(3, CASES, 10, pieces), ...strings(13, CASES, 8, pieces).map((s) => `${s}]`), 'Example Registrar Ltd t/a Example [Tag = EXAMPLE]']) {
    assert.equal(withoutTrailingTag(value), value.replace(OLD, ''), JSON.stringify(value));
  }
});

test('withoutTrailingNewlines is .replace(/\\n+$/, "")', () => {
  for (const value of strings(4, 2_000, 8, ['\n', 'a', '\r', ' '])) assert.equal(withoutTrailingNewlines(value), value.replace(/\n+$/, ''));
});

/** addressesIn as it was, with the quadratic IPv6 candidate regex. */
function oldAddressesIn(value: string): string[] {
  const canonical = (text: string): string | null => {
    const bare = text.replace(/^\[|\]$/g, '').split('%')[0]!;
    if (!ipaddr.isValid(bare)) return null;
    try {
      const addr = ipaddr.process(bare);
      if (!bare.includes(':') && !/^\d{1,3}(\.\d{1,3}){3}$/.test(bare)) return null;
      return normalizeAddress(addr.toString());
    } catch {
      return null;
    }
  };
  const found = new Set<string>();
  for (const m of value.matchAll(/\d{1,3}(?:\.\d{1,3}){3}/g)) {
    const c = canonical(m[0]);
    if (c) found.add(c);
  }
  for (const m of value.matchAll(/[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*/g)) {
    let candidate = m[0];
    for (let i = 0; i < 2 && candidate.length > 0; i++) {
      const c = canonical(candidate);
      if (c) {
        found.add(c);
        break;
      }
      candidate = candidate.replace(/:[^:]*$/, '');
    }
  }
  return [...found];
}

test('addressesIn finds what the old regexes found', () => {
  const pieces = [':', '::', '1', 'db8', '2001', 'f', '.', '192.0.2.1', ',', ' ', '[', ']', 'for=', '"', 'ffff', '4711', 'g', '%eth0'];
  const inputs = [
    ...strings(5, CASES, 14, pieces),
    'for="[2001:db8::7]:4711"',
    '::ffff:203.0.113.7',
    '10.0.0.1, 203.0.113.7',
    '2001:0db8:0000:0000:0000:0000:0000:0007',
    'a:b:c 1.2:3::4 fe80::1%eth0',
  ];
  for (const value of inputs) assert.deepEqual(addressesIn(value).sort(), oldAddressesIn(value).sort(), JSON.stringify(value));
});
