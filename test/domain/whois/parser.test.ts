import assert from 'node:assert/strict';
import { test } from 'node:test';
import { toIsoDate } from '../../../src/domain/whois/dates.js';
import { entries, parseWhois } from '../../../src/domain/whois/parser.js';
import { findReferral, parseReferral } from '../../../src/domain/whois/referral.js';
import { EXAMPLE_COM_FIELDS, whoisSample as sample } from '../../fixtures/whois-samples.js';

test('.com thick registry (Verisign)', () => {
  assert.deepEqual(parseWhois(sample('com-verisign.txt')), { ...EXAMPLE_COM_FIELDS, whois_server: 'whois.example-registrar.com' });
});

test('.com registrar (ICANN RAA format, +0000 offsets)', () => {
  const f = parseWhois(sample('com-registrar.txt'));
  assert.equal(f.domain, 'example.com');
  assert.equal(f.registrar, 'Example Registrar, LLC');
  assert.equal(f.registrar_url, 'https://www.example-registrar.com');
  assert.equal(f.expiration_date, '2025-08-13T04:00:00Z');
  assert.equal(f.creation_date, '1995-08-14T04:00:00Z');
  assert.deepEqual(f.name_servers, ['a.iana-servers.net', 'b.iana-servers.net']);
});

test('.net: name servers deduplicated case-insensitively, unsigned, ok status', () => {
  const f = parseWhois(sample('net-verisign.txt'));
  assert.equal(f.domain, 'example.net');
  assert.deepEqual(f.name_servers, ['ns1.example.net', 'ns2.example.net']);
  assert.deepEqual(f.status, ['ok']);
  assert.equal(f.dnssec, false);
  assert.equal(f.expiration_date, '2026-08-13T04:00:00Z');
});

test('.org (PIR): http:// registrar WHOIS server reported as a host', () => {
  assert.deepEqual(parseWhois(sample('org-pir.txt')), {
    domain: 'example.org',
    registered: true,
    registrar: 'Example Registrar, Inc.',
    registrar_url: 'http://www.example-registrar.org',
    whois_server: 'whois.example-registrar.org',
    creation_date: '1995-08-31T04:00:00Z',
    updated_date: '2024-07-16T09:12:44Z',
    expiration_date: '2025-08-30T04:00:00Z',
    name_servers: ['ns1.example.org', 'ns2.example.org'],
    status: ['clientTransferProhibited', 'serverDeleteProhibited'],
    dnssec: false,
  });
});

test('.de (DENIC): Nserver with glue, Changed with an offset, Dnskey means signed', () => {
  assert.deepEqual(parseWhois(sample('de-denic.txt')), {
    domain: 'example.de',
    registered: true,
    registrar: null,
    registrar_url: null,
    whois_server: null,
    creation_date: null,
    updated_date: '2023-11-08T13:21:53Z',
    expiration_date: null,
    name_servers: ['ns1.example.net', 'ns2.example.de'],
    status: ['connect'],
    dnssec: true,
  });
});

test('.uk (Nominet): indented blocks', () => {
  assert.deepEqual(parseWhois(sample('uk-nominet.txt')), {
    domain: 'example.co.uk',
    registered: true,
    registrar: 'Example Registrar Ltd t/a Example Hosting',
    registrar_url: 'https://www.example-hosting.co.uk',
    whois_server: null,
    creation_date: '1995-08-01T00:00:00Z',
    updated_date: '2024-07-30T00:00:00Z',
    expiration_date: '2025-08-01T00:00:00Z',
    name_servers: ['ns1.example-hosting.net', 'ns2.example-hosting.net', 'ns3.example-hosting.net'],
    status: ['Registered until expiry date.'],
    dnssec: null,
  });
});

test('.ru (RIPE-style key: value): paid-till, comma-separated state', () => {
  assert.deepEqual(parseWhois(sample('ru-tcinet.txt')), {
    domain: 'example.ru',
    registered: true,
    registrar: 'RU-CENTER-RU',
    registrar_url: null,
    whois_server: null,
    creation_date: '2004-05-07T12:00:00Z',
    updated_date: null,
    expiration_date: '2025-05-07T12:00:00Z',
    name_servers: ['ns1.example.ru', 'ns2.example.ru'],
    status: ['REGISTERED', 'DELEGATED', 'VERIFIED'],
    dnssec: null,
  });
});

test('.eu (EURid blocks): registrar sub-keys, contact blocks ignored, Keys means signed', () => {
  const f = parseWhois(sample('eu-eurid.txt'));
  assert.equal(f.domain, 'example.eu');
  assert.equal(f.registered, true);
  assert.equal(f.registrar, 'Example Registrar GmbH');
  assert.equal(f.registrar_url, 'https://www.example-registrar.eu');
  assert.deepEqual(f.name_servers, ['ns1.example-hosting.eu', 'ns2.example-hosting.eu']);
  assert.equal(f.dnssec, true);
  assert.ok(!entries(sample('eu-eurid.txt')).some((e) => e.key === 'organisation'));
});

test('not registered', () => {
  for (const name of ['com-notfound.txt', 'org-notfound.txt', 'de-denic-free.txt', 'uk-nominet-notfound.txt', 'ru-notfound.txt']) {
    const f = parseWhois(sample(name));
    assert.equal(f.registered, false, name);
    assert.deepEqual(f.status, [], name);
  }
  assert.equal(parseWhois('Domain: nope-example.eu\nScript: LATIN\n\nStatus: AVAILABLE\n').registered, false);
  assert.equal(parseWhois('%% NOT FOUND\n').registered, false);
});

test('IANA: refers, and is about the TLD', () => {
  const text = sample('iana-com.txt');
  assert.deepEqual(findReferral(entries(text)), { host: 'whois.verisign-grs.com', port: 43 });
  assert.equal(parseWhois(text).domain, 'com');
});

test('referral values', () => {
  assert.deepEqual(parseReferral('whois.example.net'), { host: 'whois.example.net', port: 43 });
  assert.deepEqual(parseReferral('WHOIS.Example.NET.'), { host: 'whois.example.net', port: 43 });
  assert.deepEqual(parseReferral('whois.example.net:4343'), { host: 'whois.example.net', port: 4343 });
  assert.deepEqual(parseReferral('127.0.0.1:4343'), { host: '127.0.0.1', port: 4343 });
  assert.deepEqual(parseReferral('whois://whois.example.net'), { host: 'whois.example.net', port: 43 });
  assert.deepEqual(parseReferral('rwhois://rwhois.example.net:4321'), { host: 'rwhois.example.net', port: 4321 });
  assert.deepEqual(parseReferral('rwhois://rwhois.example.net'), { host: 'rwhois.example.net', port: 4321 });
  assert.deepEqual(parseReferral('[2001:db8::43]:4343'), { host: '2001:db8::43', port: 4343 });
  assert.deepEqual(parseReferral('2001:db8::43'), { host: '2001:db8::43', port: 43 });
  assert.deepEqual(parseReferral('http://whois.example.net'), { host: 'whois.example.net', port: 43 });
  assert.equal(parseReferral('https://www.example.net/whois?domain=x'), null);
  assert.equal(parseReferral(''), null);
  assert.equal(parseReferral('not a host!'), null);
  assert.equal(parseReferral('whois.example.net:99999'), null);
  // ARIN-style key
  assert.deepEqual(findReferral(entries('ReferralServer: whois://whois.ripe.net\n')), { host: 'whois.ripe.net', port: 43 });
});

test('dates', () => {
  const cases: Array<[string, string | null]> = [
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05Z'],
    ['2024-01-02T03:04:05.123Z', '2024-01-02T03:04:05Z'],
    ['2024-01-02T03:04:05+02:00', '2024-01-02T01:04:05Z'],
    ['2024-01-02T03:04:05-0500', '2024-01-02T08:04:05Z'],
    ['2024-01-02 03:04:05', '2024-01-02T03:04:05Z'],
    ['2024-01-02 03:04:05 UTC', '2024-01-02T03:04:05Z'],
    ['2024-01-02', '2024-01-02T00:00:00Z'],
    ['2024.01.02', '2024-01-02T00:00:00Z'],
    ['2024/01/02 03:04:05', '2024-01-02T03:04:05Z'],
    ['01-Aug-1995', '1995-08-01T00:00:00Z'],
    ['1 August 2025', '2025-08-01T00:00:00Z'],
    ['15.10.1997', '1997-10-15T00:00:00Z'],
    ['20240102', '2024-01-02T00:00:00Z'],
    ['Tue Jan 02 03:04:05 GMT 2024', '2024-01-02T03:04:05Z'],
    ['2025-06-07 (YYYY-MM-DD)', '2025-06-07T00:00:00Z'],
    ['2024-02-30', null],
    ['01/02/2024', null],
    ['before 1996', null],
    ['', null],
  ];
  for (const [input, expected] of cases) assert.equal(toIsoDate(input), expected, input);
});
