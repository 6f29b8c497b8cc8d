import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ValidationError } from '../../../src/errors.js';
import { ipLiteral, normalizeDomain, parseRecordType, queryName, reverseName } from '../../../src/domain/dns/names.js';

function rejects(input: string, rule: RegExp, opts: Parameters<typeof normalizeDomain>[1] = {}): void {
  assert.throws(
    () => normalizeDomain(input, opts),
    (err: unknown) => err instanceof ValidationError && err.status === 400 && rule.test(err.message),
    `${JSON.stringify(input)} should be refused with ${rule}`,
  );
}

test('normalises: trim, trailing dot, lowercase, IDN to punycode', () => {
  assert.equal(normalizeDomain('  Example.COM.  '), 'example.com');
  assert.equal(normalizeDomain('bücher.example'), 'xn--bcher-kva.example');
  assert.equal(normalizeDomain('例え.テスト'), 'xn--r8jz45g.xn--zckzah');
  assert.equal(normalizeDomain('example。com'), 'example.com');
  assert.equal(normalizeDomain('_dmarc.example.com'), '_dmarc.example.com');
  assert.equal(normalizeDomain('_sip._tcp.example.com'), '_sip._tcp.example.com');
  assert.equal(normalizeDomain('com'), 'com');
  assert.equal(normalizeDomain('a'.repeat(63) + '.com'), 'a'.repeat(63) + '.com');
});

test('refuses what is not a domain name, naming the rule', () => {
  rejects('', /^domain: must not be empty$/);
  rejects('   ', /must not be empty/);
  rejects('.', /must not be empty/);
  rejects('a..b.com', /empty label/);
  rejects('example.com..', /empty label/);
  rejects('.example.com', /empty label/);
  rejects('-abc.com', /must not start or end with a hyphen/);
  rejects('abc-.com', /must not start or end with a hyphen/);
  rejects(`${'a'.repeat(64)}.com`, /longer than 63 characters/);
  rejects(`${'abcdefghi.'.repeat(26)}com`, /at most 253 characters/);
  rejects('exa mple.com', /" " is not allowed/);
  rejects('a/b.com', /"\/" is not allowed/);
  rejects('user@example.com', /"@" is not allowed/);
  rejects('ex%41mple.com', /"%" is not allowed/);
  rejects('http://example.com', /^domain: give a domain name, not a URL \(example\.com, not http:\/\/example\.com\)$/);
  rejects('example.com:53', /^domain: give the domain name alone, without a port$/);
  rejects('example.com:dns', /":" is not allowed/);
  rejects('xn--zz.com', /not a valid internationalised domain name/);
  rejects('192.0.2.1', /not an IP address/);
  rejects('_dmarc.example.com', /must not contain an underscore/, { allowUnderscore: false });
  rejects('com', /registrable domain name/, { minLabels: 2 });
  rejects('exa mple.com', /^domains\[3\]: /, { field: 'domains[3]' });
});

test('the field is in the error details', () => {
  try {
    normalizeDomain('a..b', { field: 'domains[3]' });
    assert.fail('should throw');
  } catch (err) {
    assert.ok(err instanceof ValidationError);
    assert.deepEqual(err.details, { field: 'domains[3]' });
  }
});

test('record types: the supported list, any case, A by default', () => {
  assert.equal(parseRecordType(undefined), 'A');
  assert.equal(parseRecordType('mx'), 'MX');
  assert.equal(parseRecordType('CAA'), 'CAA');
  assert.throws(() => parseRecordType('ANY'), /^ValidationError: type: must be one of A, AAAA, MX, TXT, NS, CNAME, SOA, PTR, SRV, CAA, HTTPS, SVCB, DNSKEY, DS$/);
  assert.throws(() => parseRecordType(''), ValidationError);
});

test('PTR takes an IP address and asks for its reverse name', () => {
  assert.equal(reverseName('192.0.2.1'), '1.2.0.192.in-addr.arpa');
  assert.equal(
    reverseName('2001:db8::1'),
    '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
  );
  assert.equal(queryName('192.0.2.1', 'PTR'), '1.2.0.192.in-addr.arpa');
  assert.equal(queryName('[2001:db8::1]', 'PTR').endsWith('.ip6.arpa'), true);
  assert.equal(queryName('1.2.0.192.in-addr.arpa.', 'PTR'), '1.2.0.192.in-addr.arpa');
  assert.throws(() => queryName('192.0.2.1', 'A'), /not an IP address/);
  // Odd spellings are not IP literals here; as names they are refused.
  assert.equal(ipLiteral('127.1'), null);
  assert.throws(() => queryName('127.1', 'PTR'), ValidationError);
});
