import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import type { AppDeps } from '../../src/compose-app.js';
import { WhoisService } from '../../src/domain/whois/service.js';
import { BootstrapRegistry, RdapService, RegistrationLookup } from '../../src/domain/rdap/index.js';
import { DialerRdapHttp, DirectoryBootstrapSource } from '../../src/infra/rdap/index.js';
import { dnsWhois } from '../../src/operations/dns-whois/index.js';
import type { RouteDeps } from '../../src/http/routes/deps.js';
import type { WhoisResult } from '../../src/operations/dns-whois/schema.js';
import { createDialer, type Dialer } from '../../src/infra/net/dialer.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { startDnsServer, type DnsFixture } from '../fixtures/dns-server.js';
import { startWhoisServer, type WhoisFixture } from '../fixtures/whois-server.js';
import { EXAMPLE_COM_FIELDS, ianaReferral, whoisSample as sample } from '../fixtures/whois-samples.js';
import { connectSpy } from '../infra/net/fixtures/connect-spy.js';

/**
 * POST /api/dns/whois over real HTTP. WHOIS servers on loopback play IANA, the registries of
 * .com/.net (Verisign), .org (PIR), .de (DENIC), .uk (Nominet), .ru (TCI, RIPE style), .eu
 * (EURid) and a registrar, answering with those registries' real formats (test/fixtures/whois).
 * A DNS fixture resolves the registrar's host name, so host-name referrals go through the
 * dialer's resolve-then-check path as they do in production.
 */

const REGISTRAR_HOST = 'whois.example-registrar.test';
/** What a port-43 answer adds: its source, and no RDAP server or RDAP-only fields. */
const PORT_43 = { source: 'whois', rdap_server: null, registrant: null, abuse_email: null };
const NO_RDAP = fileURLToPath(new URL('../fixtures/rdap/no-rdap/', import.meta.url));

/** The `data` of a WHOIS answer, as the published schema describes it. */
type WhoisBody = Static<typeof WhoisResult>;
interface ErrorBody {
  success: false;
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

let dns: DnsFixture;
let iana: WhoisFixture;
let verisign: WhoisFixture;
let pir: WhoisFixture;
let denic: WhoisFixture;
let nominet: WhoisFixture;
let tcinet: WhoisFixture;
let eurid: WhoisFixture;
let registrar: WhoisFixture;
let registrarRef: string;

before(async () => {
  const w = startWhoisServer;
  [dns, iana, verisign, pir, denic, nominet, tcinet, eurid, registrar] = await Promise.all([startDnsServer(), w(), w(), w(), w(), w(), w(), w(), w()]);
  dns.add({ name: REGISTRAR_HOST, type: 'A', ttl: 60, data: '127.0.0.1' });
  registrarRef = `${REGISTRAR_HOST}:${registrar.port}`;
  const registries: Record<string, WhoisFixture> = { com: verisign, net: verisign, org: pir, de: denic, uk: nominet, ru: tcinet, eu: eurid };
  // IANA answers with its real TLD record, referring to our registry for that TLD.
  iana.reply('*', ianaReferral((tld) => registries[tld]?.address));

  verisign.reply('example.com', sample('com-verisign.txt', { 'whois.example-registrar.com': registrarRef }));
  registrar.reply('example.com', sample('com-registrar.txt', { 'whois.example-registrar.com': registrarRef }));
  verisign.reply('example.net', sample('net-verisign.txt', { 'whois.other-registrar.net': registrar.address }));
  registrar.reply('example.net', 'Domain Name: example.net\nRegistrar: Other Registrar, Inc.\nRegistrar URL: https://other-registrar.example\n');
  pir.reply('example.org', sample('org-pir.txt', { 'http://whois.example-registrar.org': registrarRef }));
  registrar.reply('example.org', 'Domain Name: EXAMPLE.ORG\nRegistrar: Example Registrar, Inc.\nRegistrar URL: https://www.example-registrar.org\n');
  denic.reply('example.de', sample('de-denic.txt'));
  nominet.reply('example.co.uk', sample('uk-nominet.txt'));
  tcinet.reply('example.ru', sample('ru-tcinet.txt'));
  eurid.reply('example.eu', sample('eu-eurid.txt'));
  verisign.reply('nope-example.com', sample('com-notfound.txt'));
  pir.reply('nope-example.org', sample('org-notfound.txt'));
  denic.reply('nope-example.de', sample('de-denic-free.txt'));
  nominet.reply('nope-example.co.uk', sample('uk-nominet-notfound.txt'));
  tcinet.reply('nope-example.ru', sample('ru-notfound.txt'));
});
after(() => Promise.all([dns, iana, verisign, pir, denic, nominet, tcinet, eurid, registrar].map((f) => f.close())));

function clearQueries(): void {
  for (const f of [iana, verisign, pir, denic, nominet, tcinet, eurid, registrar]) f.queries.length = 0;
}

async function app(t: TestContext, opts: { allow?: string; whoisServer?: string; deps?: Partial<AppDeps> } = {}): Promise<Built> {
  return build(t, {
    env: {
      NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}`,
      NETDIAG_WHOIS_SERVER: opts.whoisServer ?? iana.address,
      NETDIAG_ALLOW_TARGETS: opts.allow ?? '127.0.0.0/8',
      // No TLD has RDAP here: these tests are of the port-43 path (test/http/rdap.test.ts has the RDAP one).
      NETDIAG_RDAP_BOOTSTRAP: NO_RDAP,
    },
    ...(opts.deps ? { deps: opts.deps } : {}),
  });
}

async function post<T>(built: Built, json: unknown): Promise<{ status: number; body: T }> {
  const res = await built.api('/api/dns/whois', { json });
  const body = (await res.json()) as T;
  await assertMatchesOpenApi(built.app as FastifyInstance, 'POST', '/api/dns/whois', res.status, body);
  return { status: res.status, body };
}

async function whois(built: Built, domain: string): Promise<WhoisBody> {
  const { status, body } = await post<{ success: boolean; data: WhoisBody; message: string }>(built, { domain });
  assert.equal(status, 200, JSON.stringify(body));
  assert.equal(body.success, true);
  return body.data;
}

/** A dialer that records every connect (loopback ones really connect, nothing else leaves the host). */
function spyingDialer(allow: string[]): { dialer: Dialer; hosts: () => string[] } {
  const spy = connectSpy();
  return { dialer: createDialer({ allowTargets: allow, dnsServers: [dns.server] }, { connectFn: spy.fn }), hosts: spy.hosts };
}

describe('POST /api/dns/whois: registries in their real formats', () => {
  test('.com thick (Verisign): IANA → registry → registrar by host name; every field of docs/dns-whois.md', async (t) => {
    const built = await app(t);
    clearQueries();
    const { status, body } = await post<{ success: boolean; data: WhoisBody; message: string }>(built, { domain: 'EXAMPLE.com.' });
    assert.equal(status, 200);
    assert.equal(body.message, 'example.com: registered (whois)');
    const { raw, hops, ...fields } = body.data;
    // Registry values first: the registry's http:// registrar_url wins over the registrar's https:// one.
    assert.deepEqual(fields, { ...EXAMPLE_COM_FIELDS, whois_server: registrarRef, error: null, ...PORT_43 });
    assert.deepEqual(
      hops.map((h) => [h.server, h.status, h.error]),
      [
        [iana.address, 'ok', null],
        [verisign.address, 'ok', null],
        [registrarRef, 'ok', null],
      ],
    );
    assert.ok(hops.every((h) => h.bytes > 0 && h.response_time >= 0));
    // raw: each answering server's text under a "% whois server:" header; IANA's TLD record is not about the domain.
    assert.ok(raw.startsWith(`% whois server: ${verisign.address}\n   Domain Name: EXAMPLE.COM\n`));
    assert.ok(raw.includes(`\n% whois server: ${registrarRef}\nDomain Name: example.com\n`));
    assert.ok(!raw.includes('IANA WHOIS server'));
    assert.ok(!raw.includes('\r'));
    assert.deepEqual([iana.queries, verisign.queries, registrar.queries], [['example.com'], ['example.com'], ['example.com']]);
  });

  test('.net thick (Verisign): the registrar fills only what the registry left out', async (t) => {
    const built = await app(t);
    const data = await whois(built, 'example.net');
    assert.equal(data.registered, true);
    assert.equal(data.registrar, 'Other Registrar, Inc.');
    assert.equal(data.registrar_url, 'http://www.other-registrar.net');
    assert.equal(data.whois_server, registrar.address);
    assert.equal(data.creation_date, '1995-08-14T04:00:00Z');
    assert.equal(data.updated_date, '2023-12-22T11:10:16Z');
    assert.equal(data.expiration_date, '2026-08-13T04:00:00Z');
    assert.deepEqual(data.name_servers, ['ns1.example.net', 'ns2.example.net']);
    assert.deepEqual(data.status, ['ok']);
    assert.equal(data.dnssec, false);
  });

  test('.org (PIR): key: value registry with an http:// registrar server', async (t) => {
    const built = await app(t);
    clearQueries();
    const data = await whois(built, 'example.org');
    assert.deepEqual(
      { ...data, raw: '', hops: [] },
      {
        domain: 'example.org',
        registered: true,
        registrar: 'Example Registrar, Inc.',
        registrar_url: 'http://www.example-registrar.org',
        whois_server: registrarRef,
        creation_date: '1995-08-31T04:00:00Z',
        updated_date: '2024-07-16T09:12:44Z',
        expiration_date: '2025-08-30T04:00:00Z',
        name_servers: ['ns1.example.org', 'ns2.example.org'],
        status: ['clientTransferProhibited', 'serverDeleteProhibited'],
        dnssec: false,
        raw: '',
        hops: [],
        error: null,
        ...PORT_43,
      },
    );
    assert.deepEqual(registrar.queries, ['example.org']);
  });

  test('.de (DENIC): no registrar referral; whois_server is the registry that answered', async (t) => {
    const built = await app(t);
    const data = await whois(built, 'example.de');
    assert.deepEqual(
      { ...data, raw: '', hops: [] },
      {
        domain: 'example.de',
        registered: true,
        registrar: null,
        registrar_url: null,
        whois_server: denic.address,
        creation_date: null,
        updated_date: '2023-11-08T13:21:53Z',
        expiration_date: null,
        name_servers: ['ns1.example.net', 'ns2.example.de'],
        status: ['connect'],
        dnssec: true,
        raw: '',
        hops: [],
        error: null,
        ...PORT_43,
      },
    );
    assert.equal(data.hops.length, 2);
    assert.ok(data.raw.startsWith(`% whois server: ${denic.address}\n% Restricted rights.`));
  });

  test('.uk (Nominet): indented blocks, day-month-name dates', async (t) => {
    const built = await app(t);
    const data = await whois(built, 'example.co.uk');
    assert.equal(data.registered, true);
    assert.equal(data.registrar, 'Example Registrar Ltd t/a Example Hosting');
    assert.equal(data.registrar_url, 'https://www.example-hosting.co.uk');
    assert.equal(data.creation_date, '1995-08-01T00:00:00Z');
    assert.equal(data.updated_date, '2024-07-30T00:00:00Z');
    assert.equal(data.expiration_date, '2025-08-01T00:00:00Z');
    assert.deepEqual(data.name_servers, ['ns1.example-hosting.net', 'ns2.example-hosting.net', 'ns3.example-hosting.net']);
    assert.equal(data.whois_server, nominet.address);
  });

  test('.ru (TCI, RIPE style): lowercase keys, paid-till, comma-separated state', async (t) => {
    const built = await app(t);
    const data = await whois(built, 'example.ru');
    assert.equal(data.registered, true);
    assert.equal(data.registrar, 'RU-CENTER-RU');
    assert.equal(data.creation_date, '2004-05-07T12:00:00Z');
    assert.equal(data.expiration_date, '2025-05-07T12:00:00Z');
    assert.deepEqual(data.name_servers, ['ns1.example.ru', 'ns2.example.ru']);
    assert.deepEqual(data.status, ['REGISTERED', 'DELEGATED', 'VERIFIED']);
  });

  test('.eu (EURid): registrar block, name-server block, keys mean signed', async (t) => {
    const built = await app(t);
    const data = await whois(built, 'example.eu');
    assert.equal(data.registered, true);
    assert.equal(data.registrar, 'Example Registrar GmbH');
    assert.equal(data.registrar_url, 'https://www.example-registrar.eu');
    assert.deepEqual(data.name_servers, ['ns1.example-hosting.eu', 'ns2.example-hosting.eu']);
    assert.equal(data.dnssec, true);
  });

  test('not registered (.com, .org, .de, .uk, .ru): registered false, a 200, nothing followed', async (t) => {
    const built = await app(t);
    clearQueries();
    for (const domain of ['nope-example.com', 'nope-example.org', 'nope-example.de', 'nope-example.co.uk', 'nope-example.ru']) {
      const data = await whois(built, domain);
      assert.equal(data.registered, false, domain);
      assert.equal(data.registrar, null, domain);
      assert.equal(data.creation_date, null, domain);
      assert.deepEqual(data.name_servers, [], domain);
      assert.deepEqual(data.status, [], domain);
      assert.equal(data.hops.length, 2, domain);
      assert.equal(data.error, null, domain);
      assert.ok(data.raw.length > 0, domain);
    }
    assert.equal(registrar.queries.length, 0);
  });

  test('an internationalised name is asked as punycode', async (t) => {
    const built = await app(t);
    denic.reply('xn--bcher-kva.de', 'Domain: bücher.de\nDomain-Ace: xn--bcher-kva.de\nStatus: connect\n');
    clearQueries();
    const data = await whois(built, 'Bücher.de');
    assert.equal(data.domain, 'xn--bcher-kva.de');
    assert.equal(data.registered, true);
    assert.deepEqual(denic.queries, ['xn--bcher-kva.de']);
  });
});

describe('POST /api/dns/whois: referral limits', () => {
  test('a referral loop is cut: no server is asked twice', async (t) => {
    const built = await app(t);
    verisign.reply('loop.com', `Domain Name: LOOP.COM\nRegistrar WHOIS Server: ${registrar.address}\n`);
    registrar.reply('loop.com', `Domain Name: loop.com\nRegistrar: Loop Registrar\nRegistrar WHOIS Server: ${verisign.address}\n`);
    clearQueries();
    const data = await whois(built, 'loop.com');
    assert.deepEqual(iana.queries, ['loop.com']);
    assert.deepEqual(verisign.queries, ['loop.com']);
    assert.deepEqual(registrar.queries, ['loop.com']);
    assert.deepEqual(
      data.hops.map((h) => h.server),
      [iana.address, verisign.address, registrar.address],
    );
    assert.equal(data.registered, true);
    assert.equal(data.registrar, 'Loop Registrar');
  });

  test('at most 4 servers per lookup (the first + 3 referrals)', async (t) => {
    const chain = await Promise.all([startWhoisServer(), startWhoisServer(), startWhoisServer()]);
    t.after(() => Promise.all(chain.map((f) => f.close())));
    chain.forEach((f, i) => f.reply('*', `Domain Name: long.com\nRegistrar WHOIS Server: ${chain[i + 1]?.address ?? iana.address}\n`));
    verisign.reply('long.com', `Domain Name: long.com\nRegistrar WHOIS Server: ${chain[0]!.address}\n`);
    const built = await app(t);
    const data = await whois(built, 'long.com');
    assert.deepEqual(
      data.hops.map((h) => h.server),
      [iana.address, verisign.address, chain[0]!.address, chain[1]!.address],
    );
    assert.deepEqual(chain.map((f) => f.queries.length), [1, 1, 0]);
  });

  test('a 10 MB answer is cut off at 256 KiB; the registry data is still returned', async (t) => {
    const flood = await startWhoisServer({ replies: { '*': { flood: 10 * 1024 * 1024 } } });
    t.after(() => flood.close());
    verisign.reply('big.com', sample('com-verisign.txt', { 'EXAMPLE.COM': 'BIG.COM', 'whois.example-registrar.com': flood.address }));
    const built = await app(t);
    const data = await whois(built, 'big.com');
    const hop = data.hops[2]!;
    assert.equal(hop.server, flood.address);
    assert.equal(hop.status, 'truncated');
    assert.equal(hop.bytes, 256 * 1024);
    assert.match(data.error ?? '', /answer larger than 262144 bytes, cut off/);
    assert.ok(flood.floodBytesSent < 10 * 1024 * 1024, `the server wrote ${flood.floodBytesSent} bytes before we hung up`);
    assert.equal(data.registered, true);
    assert.equal(data.registrar, 'Example Registrar, LLC');
    assert.equal(data.expiration_date, '2025-08-13T04:00:00Z');
    assert.ok(data.raw.length < 300 * 1024);
  });

  test('a first server that hangs up without a byte: 200, registered null, the reason in error', async (t) => {
    const rude = await startWhoisServer({ replies: { '*': { hangUp: true } } });
    t.after(() => rude.close());
    const built = await app(t, { whoisServer: rude.address });
    const data = await whois(built, 'example.com');
    assert.equal(data.registered, null);
    assert.equal(data.raw, '');
    assert.equal(data.error, 'no WHOIS server answered');
  });

  test('a silent first server: 200 after the 5 s hop timeout, saying so', async (t) => {
    const silent = await startWhoisServer({ replies: { '*': { silent: true } } });
    t.after(() => silent.close());
    const built = await app(t, { whoisServer: silent.address });
    const data = await whois(built, 'example.com');
    assert.equal(data.registered, null);
    assert.equal(data.hops[0]?.status, 'timeout');
    assert.match(data.error ?? '', /no complete answer within 5000 ms/);
    assert.deepEqual(silent.queries, ['example.com']);
  });
});

describe('POST /api/dns/whois: target policy', () => {
  for (const [label, referral, address] of [
    ['a private IP literal', '10.0.0.43', '10.0.0.43'],
    ['the cloud metadata address', '169.254.169.254:43', '169.254.169.254'],
    ['a host name that resolves to a private address', 'whois.evil-registrar.test', '192.168.7.43'],
  ] as const) {
    test(`a referral to ${label} → 403 target_forbidden, never dialled`, async (t) => {
      dns.add({ name: 'whois.evil-registrar.test', type: 'A', ttl: 60, data: '192.168.7.43' });
      verisign.reply('evil.com', `Domain Name: EVIL.COM\nRegistrar: Evil\nRegistrar WHOIS Server: ${referral}\n`);
      const spy = spyingDialer(['127.0.0.0/8']);
      const built = await app(t, { deps: { dialer: spy.dialer } });
      const { status, body } = await post<ErrorBody>(built, { domain: 'evil.com' });
      assert.equal(status, 403, JSON.stringify(body));
      assert.equal(body.success, false);
      assert.equal(body.error, 'target_forbidden');
      assert.equal(body.details?.address, address);
      assert.match(body.message, new RegExp(`resolves to ${address.replace(/\./g, '\\.')}, which is in the blocked`));
      // IANA and the registry were asked; the forbidden server never was.
      assert.deepEqual(spy.hosts(), ['127.0.0.1', '127.0.0.1']);
      assert.equal(spy.dialer.stats.connectAttempts, 2);
    });
  }

  test('NETDIAG_WHOIS_SERVER itself in a blocked range (nothing opted back in) → 403, no connection at all', async (t) => {
    const spy = spyingDialer([]);
    const built = await app(t, { allow: '', deps: { dialer: spy.dialer } });
    clearQueries();
    const { status, body } = await post<ErrorBody>(built, { domain: 'example.com' });
    assert.equal(status, 403);
    assert.equal(body.error, 'target_forbidden');
    assert.equal(spy.dialer.stats.connectAttempts, 0);
    assert.deepEqual(iana.queries, []);
  });
});

describe('POST /api/dns/whois: bad input → 400 naming the field and the rule, before any connection', () => {
  test('each case', async (t) => {
    const spy = spyingDialer(['127.0.0.0/8']);
    const built = await app(t, { deps: { dialer: spy.dialer } });
    const cases: Array<[unknown, string]> = [
      [{}, 'domain: is required'],
      [{ domain: '' }, 'domain: must not be empty'],
      [{ domain: 7 }, 'domain: must be a string'],
      [{ domain: 'com' }, 'domain: must be a registrable domain name such as example.com'],
      [{ domain: '_dmarc.example.com' }, 'domain: label "_dmarc" must not contain an underscore'],
      [{ domain: 'exa mple.com' }, 'domain: must be a domain name: " " is not allowed (letters, digits, hyphens and dots only)'],
      [{ domain: 'a..com' }, 'domain: must not contain an empty label (two dots in a row, or a leading dot)'],
      [{ domain: '192.0.2.1' }, 'domain: must be a domain name, not an IP address (use type PTR for reverse lookups)'],
    ];
    for (const [json, message] of cases) {
      const { status, body } = await post<ErrorBody>(built, json);
      assert.equal(status, 400, JSON.stringify(json));
      assert.equal(body.error, 'validation_error');
      assert.equal(body.message, message);
      assert.equal(body.details?.field, 'domain');
    }
    assert.equal(spy.dialer.stats.connectAttempts, 0);
  });
});

describe('POST /api/dns/whois: the operation hands its signal to the lookup', () => {
  test('aborting the run (job cancelled, client gone) closes the silent server\'s socket and rejects with the reason', { timeout: 30_000 }, async (t) => {
    let asked!: () => void;
    const queried = new Promise<void>((resolve) => (asked = resolve));
    const silent = await startWhoisServer({
      replies: {
        '*': () => {
          asked();
          return { silent: true };
        },
      },
    });
    t.after(() => silent.close());
    // Hops far longer than the test may run: only the abort can end this one.
    const port43 = new WhoisService({ dialer: createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [dns.server] }), server: silent.server, hopTimeoutMs: 600_000, totalTimeoutMs: 600_000 });
    const abort = new AbortController();
    const rdap = new RdapService({ http: new DialerRdapHttp(createDialer({ allowTargets: [], dnsServers: [dns.server] })), bootstrap: new BootstrapRegistry({ source: new DirectoryBootstrapSource(NO_RDAP) }) });
    const whois = new RegistrationLookup({ rdap, whois: port43 });
    const run = dnsWhois.run({ whois, rdap } as Partial<RouteDeps> as RouteDeps, { domain: 'example.com' }, { signal: abort.signal });
    await queried;
    const closed = silent.allClosed();
    const reason = new Error('job cancelled');
    abort.abort(reason);
    await assert.rejects(run, (err) => err === reason);
    await closed;
  });
});
