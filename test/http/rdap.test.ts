import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { WhoisResult } from '../../src/operations/dns-whois/schema.js';
import type { IpWhoisResult } from '../../src/operations/ip-whois/schema.js';
import { build, tempDir, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { startDnsServer, type DnsFixture } from '../fixtures/dns-server.js';
import { bootstrapFile, startRdapServer, type RdapFixture } from '../fixtures/rdap-server.js';
import { ARIN_AUTNUM, ARIN_NETWORK, RIPE_NETWORK, registrarDomain, registryDomain } from '../fixtures/rdap/objects.js';
import { startWhoisServer, type WhoisFixture } from '../fixtures/whois-server.js';
import { whoisSample as sample } from '../fixtures/whois-samples.js';

/**
 * WHOIS through RDAP (docs/checks.md) over real HTTP: RDAP servers on loopback play a
 * registry (Verisign's shapes), a registrar (reached by host name through the DNS fixture, as the
 * registry's "related" link names it) and two RIRs (ARIN redirecting RIPE's space, as it does).
 * The bootstrap files point at them, from a directory or from an http URL on loopback; a TLD the
 * bootstrap does not list falls back to the port-43 WHOIS fixture.
 */

type DomainData = Static<typeof WhoisResult>;
type IpData = Static<typeof IpWhoisResult>;

const REGISTRAR_HOST = 'rdap.example-registrar.test';

let dns: DnsFixture;
let registry: RdapFixture;
let registrar: RdapFixture;
let arin: RdapFixture;
let ripe: RdapFixture;
let bootstrapServer: RdapFixture;
let denic: WhoisFixture;
let files: Record<'dns' | 'ipv4' | 'ipv6' | 'asn', string>;

before(async () => {
  [dns, registry, registrar, arin, ripe, bootstrapServer, denic] = await Promise.all([
    startDnsServer(),
    startRdapServer(),
    startRdapServer(),
    startRdapServer(),
    startRdapServer(),
    startRdapServer(),
    startWhoisServer(),
  ]);
  dns.add({ name: REGISTRAR_HOST, type: 'A', ttl: 60, data: '127.0.0.1' });
  const registrarUrl = `http://${REGISTRAR_HOST}:${registrar.port}/rdap/domain/example.com`;
  registry.reply('/com/v1/domain/example.com', { json: registryDomain(registrarUrl) });
  registrar.reply('/rdap/domain/example.com', { json: registrarDomain() });
  arin.reply('/registry/ip/8.8.8.8', { json: ARIN_NETWORK });
  arin.reply('/registry/autnum/15169', { json: ARIN_AUTNUM });
  // ARIN answers for RIPE's space with a redirect to RIPE's server, as the RIRs do.
  arin.reply('/registry/ip/2001:db8::1', { redirect: `${ripe.origin}/ip/2001:db8::1`, status: 301 });
  ripe.reply('/ip/2001:db8::1', { json: RIPE_NETWORK });
  denic.reply('example.de', sample('de-denic.txt'));
  files = {
    dns: bootstrapFile('RDAP bootstrap file for Domain Name System registrations', [[['com'], [`${registry.origin}/com/v1/`]]]),
    ipv4: bootstrapFile('RDAP bootstrap file for IPv4 address allocations', [[['8.0.0.0/8'], [`${arin.origin}/registry/`]]]),
    ipv6: bootstrapFile('RDAP bootstrap file for IPv6 address allocations', [[['2001:db8::/32'], [`${arin.origin}/registry/`]]]),
    asn: bootstrapFile('RDAP bootstrap file for Autonomous System Number allocations', [[['13312-15359'], [`${arin.origin}/registry`]]]),
  };
  for (const [kind, text] of Object.entries(files)) bootstrapServer.reply(`/bootstrap/${kind}.json`, { text, type: 'application/json' });
});
after(() => Promise.all([dns, registry, registrar, arin, ripe, bootstrapServer, denic].map((f) => f.close())));

function bootstrapDir(t: TestContext): string {
  const dir = tempDir(t, 'netdiag-rdap-');
  for (const [kind, text] of Object.entries(files)) writeFileSync(join(dir, `${kind}.json`), text);
  return dir;
}

async function app(t: TestContext, bootstrap: string = bootstrapDir(t)): Promise<Built> {
  return build(t, {
    env: {
      NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}`,
      NETDIAG_WHOIS_SERVER: denic.address,
      NETDIAG_ALLOW_TARGETS: '127.0.0.0/8',
      NETDIAG_RDAP_BOOTSTRAP: bootstrap,
    },
  });
}

async function call<T>(built: Built, path: string, json: unknown): Promise<{ status: number; body: { success: boolean; data: T; message: string; error?: string; details?: { field?: string } } }> {
  const res = await built.api(`/api${path}`, { json });
  const body = (await res.json()) as { success: boolean; data: T; message: string };
  await assertMatchesOpenApi(built.app as FastifyInstance, 'POST', `/api${path}`, res.status, body);
  return { status: res.status, body };
}

async function ok<T>(built: Built, path: string, json: unknown): Promise<T> {
  const { status, body } = await call<T>(built, path, json);
  assert.equal(status, 200, JSON.stringify(body));
  return body.data;
}

describe('POST /api/dns/whois through RDAP', () => {
  test('registry + registrar on loopback: every field from RDAP, source "rdap"', async (t) => {
    const built = await app(t);
    registry.requests.length = 0;
    registrar.requests.length = 0;
    const { status, body } = await call<DomainData>(built, '/dns/whois', { domain: 'Example.COM.' });
    assert.equal(status, 200);
    assert.equal(body.message, 'example.com: registered (rdap)');
    const { raw, hops, ...fields } = body.data;
    assert.deepEqual(fields, {
      domain: 'example.com',
      registered: true,
      // The registry's registrar name; the registrar's website (the registry publishes none).
      registrar: 'Example Registrar, LLC',
      registrar_url: 'https://www.example-registrar.test',
      whois_server: 'whois.example-registrar.test',
      creation_date: '1995-08-14T04:00:00Z',
      updated_date: '2025-08-14T07:01:44Z',
      expiration_date: '2026-08-13T04:00:00Z',
      name_servers: ['a.iana-servers.net', 'b.iana-servers.net'],
      status: ['clientDeleteProhibited', 'clientTransferProhibited', 'clientUpdateProhibited'],
      dnssec: true,
      error: null,
      source: 'rdap',
      rdap_server: `${registry.origin}/com/v1/`,
      registrant: 'Internet Assigned Numbers Authority',
      abuse_email: 'abuse@example-registrar.test',
    });
    assert.deepEqual(
      hops.map((h) => [h.server, h.status, h.error]),
      [
        [`${registry.origin}/com/v1/domain/example.com`, 'ok', null],
        [`http://${REGISTRAR_HOST}:${registrar.port}/rdap/domain/example.com`, 'ok', null],
      ],
    );
    // raw is the registry's JSON text as received.
    assert.equal((JSON.parse(raw) as { handle: string }).handle, '2336799_DOMAIN_COM-VRSN');
    assert.deepEqual([registry.requests, registrar.requests], [['/com/v1/domain/example.com'], ['/rdap/domain/example.com']]);
    assert.match(registry.accepts[0]!, /^application\/rdap\+json/);
    assert.deepEqual(denic.queries, [], 'no port-43 query for a TLD with RDAP');
  });

  test('a domain the registry does not know (404): registered false, from RDAP', async (t) => {
    const built = await app(t);
    const data = await ok<DomainData>(built, '/dns/whois', { domain: 'nope-example.com' });
    assert.equal(data.source, 'rdap');
    assert.equal(data.registered, false);
    assert.equal(data.registrar, null);
    assert.equal(data.error, null);
    assert.deepEqual(data.hops.map((h) => h.status), ['ok']);
  });

  test('a TLD missing from the bootstrap falls back to port-43 WHOIS: source "whois"', async (t) => {
    const built = await app(t);
    denic.queries.length = 0;
    registry.requests.length = 0;
    const data = await ok<DomainData>(built, '/dns/whois', { domain: 'example.de' });
    assert.equal(data.source, 'whois');
    assert.equal(data.rdap_server, null);
    assert.equal(data.registered, true);
    assert.deepEqual(data.name_servers, ['ns1.example.net', 'ns2.example.de']);
    assert.equal(data.whois_server, denic.address);
    assert.deepEqual(denic.queries, ['example.de']);
    assert.deepEqual(registry.requests, []);
  });

  test('bootstrap files from an http URL on loopback, fetched through the dialer once and cached', async (t) => {
    const built = await app(t, `${bootstrapServer.origin}/bootstrap/`);
    bootstrapServer.requests.length = 0;
    const first = await ok<DomainData>(built, '/dns/whois', { domain: 'example.com' });
    const second = await ok<DomainData>(built, '/dns/whois', { domain: 'example.com' });
    assert.equal(first.source, 'rdap');
    assert.equal(first.registrar, 'Example Registrar, LLC');
    const noTimes = (d: DomainData) => ({ ...d, hops: d.hops.map((h) => ({ ...h, response_time: 0 })) });
    assert.deepEqual(noTimes(second), noTimes(first));
    assert.deepEqual(bootstrapServer.requests, ['/bootstrap/dns.json']);
    const net = await ok<IpData>(built, '/ip/whois', { ip: '8.8.8.8' });
    assert.equal(net.handle, 'NET-8-8-8-0-2');
    assert.deepEqual(bootstrapServer.requests, ['/bootstrap/dns.json', '/bootstrap/ipv4.json']);
  });

  test('a bootstrap URL that cannot be fetched: the shipped snapshot is used (com is listed there)', async (t) => {
    // Nothing listens on port 9 of 127.0.0.1: the fetch fails, the snapshot names Verisign's server.
    const built = await app(t, 'http://127.0.0.1:9/rdap/');
    const data = await ok<DomainData>(built, '/dns/whois', { domain: 'example.com' });
    assert.equal(data.source, 'rdap');
    assert.equal(data.rdap_server, 'https://rdap.verisign.com/com/v1/');
    // No internet in tests: the DNS fixture knows no rdap.verisign.com, and the answer says so.
    assert.equal(data.registered, null);
    assert.match(data.error ?? '', /^https:\/\/rdap\.verisign\.com\/com\/v1\/domain\/example\.com: /);
  });
});

describe('POST /api/ip/whois', () => {
  test('an IPv4 address: the network from the RIR, cidr0 blocks, the registrant and its abuse e-mail', async (t) => {
    const built = await app(t);
    const { status, body } = await call<IpData>(built, '/ip/whois', { ip: '8.8.8.8' });
    assert.equal(status, 200);
    assert.equal(body.message, '8.8.8.8: GOGL');
    const { raw, hops, ...fields } = body.data;
    assert.deepEqual(fields, {
      query: '8.8.8.8',
      source: 'rdap',
      rdap_server: `${arin.origin}/registry/`,
      handle: 'NET-8-8-8-0-2',
      name: 'GOGL',
      type: 'DIRECT ALLOCATION',
      country: null,
      start_address: '8.8.8.0',
      end_address: '8.8.8.255',
      cidr: ['8.8.8.0/24'],
      asn_range: null,
      registrant: 'Google LLC',
      abuse_email: 'network-abuse@google.com',
      created: '2023-12-28T22:24:33Z',
      updated: '2023-12-28T22:24:56Z',
      error: null,
    });
    assert.equal((JSON.parse(raw) as { handle: string }).handle, 'NET-8-8-8-0-2');
    assert.deepEqual(hops.map((h) => h.status), ['ok']);
  });

  test('an IPv6 address: ARIN redirects to RIPE (the hop re-checked and reported); the range becomes its CIDR', async (t) => {
    const built = await app(t);
    const data = await ok<IpData>(built, '/ip/whois', { ip: '2001:DB8:0:0::1' });
    assert.equal(data.query, '2001:db8::1');
    assert.equal(data.handle, '2001:db8::/32');
    assert.equal(data.name, 'EXAMPLE-NET6');
    assert.equal(data.country, 'NL');
    assert.deepEqual(data.cidr, ['2001:db8::/32']);
    assert.equal(data.start_address, '2001:db8::');
    assert.equal(data.registrant, 'Example Networks B.V.');
    assert.equal(data.abuse_email, 'abuse@example.nl');
    assert.equal(data.created, '2010-01-05T10:00:00Z');
    assert.deepEqual(
      data.hops.map((h) => [h.server, h.status]),
      [
        [`${arin.origin}/registry/ip/2001:db8::1`, 'ok'],
        [`${ripe.origin}/ip/2001:db8::1`, 'ok'],
      ],
    );
  });

  test('an AS number, as a number or "AS15169"', async (t) => {
    const built = await app(t);
    for (const asn of [15169, 'AS15169', 'as15169', '15169']) {
      const data = await ok<IpData>(built, '/ip/whois', { asn });
      assert.equal(data.query, 'AS15169');
      assert.equal(data.handle, 'AS15169');
      assert.equal(data.name, 'GOOGLE');
      assert.deepEqual(data.asn_range, { start: 15169, end: 15169 });
      assert.deepEqual(data.cidr, []);
      assert.equal(data.registrant, 'Google LLC');
      assert.equal(data.abuse_email, 'network-abuse@google.com');
      assert.equal(data.created, '2000-03-30T05:00:00Z');
      assert.equal(data.error, null);
    }
  });

  test('nothing registered, or no RIR for it: a 200 whose error says so', async (t) => {
    const built = await app(t);
    const missing = await ok<IpData>(built, '/ip/whois', { ip: '8.8.4.4' });
    assert.equal(missing.handle, null);
    assert.match(missing.error ?? '', /not found \(HTTP 404\): no registration for 8\.8\.4\.4$/);
    const none = await ok<IpData>(built, '/ip/whois', { asn: 64512 });
    assert.equal(none.rdap_server, null);
    assert.equal(none.error, 'no RDAP service for AS64512 in the bootstrap registry');
    assert.deepEqual(none.hops, []);
  });

  test('bad input: a 400 naming the field and the rule', async (t) => {
    const built = await app(t);
    const cases: Array<[unknown, string, string]> = [
      [{}, 'ip', 'ip: required: give ip (an IP address) or asn (an AS number)'],
      [{ ip: 'not-an-ip' }, 'ip', 'ip: must be an IPv4 or IPv6 address (e.g. 8.8.8.8, 2001:4860::8888)'],
      [{ asn: 'ASX' }, 'asn', 'asn: must be an AS number 0-4294967295, as a number (15169) or a string ("15169", "AS15169")'],
      [{ asn: 4294967296 }, 'asn', 'asn: must be between 0 and 4294967295'],
      [{ ip: '8.8.8.8', asn: 15169 }, 'asn', 'asn: give either ip or asn, not both'],
    ];
    for (const [json, field, message] of cases) {
      const { status, body } = await call<unknown>(built, '/ip/whois', json);
      assert.equal(status, 400, JSON.stringify(json));
      assert.equal(body.error, 'validation_error');
      assert.equal(body.details?.field, field, JSON.stringify(json));
      assert.equal(body.message, message);
    }
  });
});
