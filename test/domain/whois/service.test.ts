import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { WhoisService } from '../../../src/domain/whois/service.js';
import { TargetForbiddenError, ValidationError } from '../../../src/errors.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { startDnsServer, type DnsFixture } from '../../fixtures/dns-server.js';
import { EXAMPLE_COM_FIELDS, ianaReferral, whoisSample as sample } from '../../fixtures/whois-samples.js';
import { startWhoisServer, type WhoisFixture } from '../../fixtures/whois-server.js';

/** A loopback port with nothing listening: connecting is refused at once. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let dns: DnsFixture;
let iana: WhoisFixture;
let registry: WhoisFixture;
let registrar: WhoisFixture;
// The real dialer: target policy with loopback opted back in, names resolved by the DNS fixture.
let dialer: ReturnType<typeof createDialer>;

before(async () => {
  [dns, iana, registry, registrar] = await Promise.all([startDnsServer(), startWhoisServer(), startWhoisServer(), startWhoisServer()]);
  dns.add({ name: 'whois.example-registrar.test', type: 'A', ttl: 60, data: '127.0.0.1' });
  dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [dns.server] });
  // IANA refers every TLD to the one fixture registry.
  iana.reply('*', ianaReferral(() => registry.address));
});
after(() => Promise.all([dns.close(), iana.close(), registry.close(), registrar.close()]));

/** A test's give-up where only a long timeout would end the lookup otherwise: waiting for that fails the test. */
const GIVE_UP = { timeout: 15_000 };

function service(opts: Partial<ConstructorParameters<typeof WhoisService>[0]> = {}): WhoisService<string> {
  // The fixtures answer at once: a hop timeout no busy machine reaches. Tests of silence set theirs.
  return new WhoisService({ dialer, server: iana.server, hopTimeoutMs: 10_000, ...opts });
}

function clearQueries(): void {
  for (const f of [iana, registry, registrar]) f.queries.length = 0;
}

describe('referral chain', () => {
  test('.com: IANA -> registry -> registrar (by host name), registry data first', async () => {
    const registrarRef = `whois.example-registrar.test:${registrar.port}`;
    registry.reply('example.com', sample('com-verisign.txt', { 'whois.example-registrar.com': registrarRef }));
    registrar.reply('example.com', sample('com-registrar.txt', { 'whois.example-registrar.com': registrarRef }));
    clearQueries();
    const result = await service().lookup('EXAMPLE.com.');

    assert.deepEqual(iana.queries, ['example.com']);
    assert.deepEqual(registry.queries, ['example.com']);
    // The registrar names itself as its WHOIS server: asked once, not again.
    assert.deepEqual(registrar.queries, ['example.com']);
    assert.deepEqual(
      result.hops.map((h) => [h.server, h.status]),
      [
        [iana.address, 'ok'],
        [registry.address, 'ok'],
        [registrarRef, 'ok'],
      ],
    );
    const { raw, hops, ...fields } = result;
    assert.deepEqual(fields, { ...EXAMPLE_COM_FIELDS, whois_server: registrarRef, error: null });
    assert.ok(raw.startsWith(`% whois server: ${registry.address}\n   Domain Name: EXAMPLE.COM`));
    assert.ok(raw.includes(`% whois server: ${registrarRef}\nDomain Name: example.com`));
    assert.ok(!raw.includes('IANA WHOIS server'));
    assert.ok(hops.every((h) => h.response_time >= 0 && h.bytes > 0));
  });

  test('.net thick registry', async () => {
    registry.reply('example.net', sample('net-verisign.txt', { 'whois.other-registrar.net': registrar.address }));
    registrar.reply('example.net', 'Domain Name: example.net\nRegistrar: Other Registrar, Inc.\n');
    const result = await service().lookup('example.net');
    assert.equal(result.registered, true);
    assert.equal(result.registrar, 'Other Registrar, Inc.');
    assert.equal(result.expiration_date, '2026-08-13T04:00:00Z');
    assert.deepEqual(result.name_servers, ['ns1.example.net', 'ns2.example.net']);
    assert.deepEqual(result.status, ['ok']);
    assert.equal(result.dnssec, false);
  });

  test('.org: a dead registrar server does not fail the lookup', async () => {
    const port = await deadPort();
    registry.reply('example.org', sample('org-pir.txt', { 'http://whois.example-registrar.org': `127.0.0.1:${port}` }));
    const result = await service().lookup('example.org');
    assert.equal(result.registered, true);
    assert.equal(result.registrar, 'Example Registrar, Inc.');
    assert.equal(result.creation_date, '1995-08-31T04:00:00Z');
    assert.equal(result.expiration_date, '2025-08-30T04:00:00Z');
    assert.deepEqual(result.name_servers, ['ns1.example.org', 'ns2.example.org']);
    assert.deepEqual(result.status, ['clientTransferProhibited', 'serverDeleteProhibited']);
    assert.equal(result.hops[2]?.status, 'failed');
    assert.match(result.error ?? '', /connection refused/);
    assert.ok(result.raw.includes('Domain Name: example.org'));
  });

  test('.de (DENIC): no registrar referral; whois_server is the server that answered', async () => {
    registry.reply('example.de', sample('de-denic.txt'));
    const result = await service().lookup('example.de');
    assert.equal(result.registered, true);
    assert.deepEqual(result.status, ['connect']);
    assert.deepEqual(result.name_servers, ['ns1.example.net', 'ns2.example.de']);
    assert.equal(result.updated_date, '2023-11-08T13:21:53Z');
    assert.equal(result.whois_server, registry.address);
    assert.equal(result.hops.length, 2);
    assert.equal(result.error, null);
  });

  test('.uk (Nominet)', async () => {
    registry.reply('example.co.uk', sample('uk-nominet.txt'));
    const result = await service().lookup('example.co.uk');
    assert.equal(result.registered, true);
    assert.equal(result.registrar, 'Example Registrar Ltd t/a Example Hosting');
    assert.equal(result.creation_date, '1995-08-01T00:00:00Z');
    assert.equal(result.expiration_date, '2025-08-01T00:00:00Z');
    assert.equal(result.updated_date, '2024-07-30T00:00:00Z');
    assert.deepEqual(result.name_servers, ['ns1.example-hosting.net', 'ns2.example-hosting.net', 'ns3.example-hosting.net']);
  });

  test('not registered: registered false, nothing more followed', async () => {
    registry.reply('nope-example.com', sample('com-notfound.txt'));
    registry.reply('nope-example.de', sample('de-denic-free.txt'));
    for (const domain of ['nope-example.com', 'nope-example.de']) {
      const result = await service().lookup(domain);
      assert.equal(result.registered, false, domain);
      assert.equal(result.registrar, null);
      assert.deepEqual(result.name_servers, []);
      assert.equal(result.hops.length, 2);
      assert.equal(result.error, null);
    }
  });

  test('IDN is asked as punycode', async () => {
    registry.reply('xn--bcher-kva.de', 'Domain: bücher.de\nDomain-Ace: xn--bcher-kva.de\nStatus: connect\n');
    clearQueries();
    const result = await service().lookup('Bücher.de');
    assert.deepEqual(registry.queries, ['xn--bcher-kva.de']);
    assert.equal(result.domain, 'xn--bcher-kva.de');
    assert.equal(result.registered, true);
  });
});

describe('limits', () => {
  test('a referral loop is cut: no server is asked twice', async () => {
    registry.reply('loop.com', `Domain Name: LOOP.COM\nRegistrar WHOIS Server: ${registrar.address}\n`);
    registrar.reply('loop.com', `Domain Name: loop.com\nRegistrar: Loop Registrar\nRegistrar WHOIS Server: ${registry.address}\n`);
    clearQueries();
    const result = await service().lookup('loop.com');
    assert.deepEqual(registry.queries, ['loop.com']);
    assert.deepEqual(registrar.queries, ['loop.com']);
    assert.equal(result.hops.length, 3);
    assert.equal(result.registrar, 'Loop Registrar');
  });

  test('at most 4 servers per lookup (IANA + 3 referrals)', async () => {
    const chain = await Promise.all([startWhoisServer(), startWhoisServer(), startWhoisServer(), startWhoisServer()]);
    try {
      chain.forEach((f, i) => {
        const nextRef = chain[i + 1]?.address ?? iana.address;
        f.reply('*', `Domain Name: long.com\nRegistrar WHOIS Server: ${nextRef}\n`);
      });
      registry.reply('long.com', `Domain Name: long.com\nRegistrar WHOIS Server: ${chain[0]!.address}\n`);
      const result = await service().lookup('long.com');
      assert.equal(result.hops.length, 4);
      assert.equal(chain[0]!.queries.length, 1);
      assert.equal(chain[1]!.queries.length, 1);
      assert.equal(chain[2]!.queries.length, 0);
    } finally {
      await Promise.all(chain.map((f) => f.close()));
    }
  });

  test('a 10 MB answer is cut at the cap, not read to its end, and the lookup still answers', async () => {
    const flood = await startWhoisServer({ replies: { '*': { flood: 10 * 1024 * 1024 } } });
    try {
      registry.reply('big.com', sample('com-verisign.txt', { 'EXAMPLE.COM': 'BIG.COM', 'whois.example-registrar.com': flood.address }));
      // A timeout no busy machine reaches: the hop is cut by the cap ('truncated'), not by time.
      const result = await service({ hopTimeoutMs: 60_000 }).lookup('big.com');
      const hop = result.hops[2]!;
      assert.equal(hop.status, 'truncated');
      assert.equal(hop.bytes, 256 * 1024);
      assert.match(result.error ?? '', /larger than 262144 bytes/);
      assert.ok(flood.floodBytesSent < 10 * 1024 * 1024, `server wrote ${flood.floodBytesSent} bytes`);
      assert.equal(result.registered, true);
      assert.equal(result.registrar, 'Example Registrar, LLC');
    } finally {
      await flood.close();
    }
  });

  test('a silent registrar times out per hop; the registry data is kept', GIVE_UP, async () => {
    const silent = await startWhoisServer({ replies: { '*': { silent: true } } });
    try {
      registry.reply('slow.com', sample('com-verisign.txt', { 'EXAMPLE.COM': 'SLOW.COM', 'whois.example-registrar.com': silent.address }));
      // Every hop has this timeout, the answering ones too: short for the test, long for a busy
      // machine's answers. The lookup's own deadline is beyond the test's give-up: only the
      // hop's timeout can end it.
      const started = Date.now();
      const result = await service({ hopTimeoutMs: 1_500, totalTimeoutMs: 600_000 }).lookup('slow.com');
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 1_500, `took ${elapsed} ms`);
      assert.deepEqual(silent.queries, ['slow.com']);
      assert.equal(result.hops[2]?.status, 'timeout');
      assert.match(result.error ?? '', /no complete answer within 1500 ms/);
      assert.equal(result.registered, true);
      assert.equal(result.expiration_date, '2025-08-13T04:00:00Z');
    } finally {
      await silent.close();
    }
  });

  test('the whole lookup has its own deadline', GIVE_UP, async () => {
    const silent = await startWhoisServer({ replies: { '*': { silent: true } } });
    try {
      // The hop's timeout is beyond the test's give-up: only the lookup's deadline can end it.
      const result = await service({ server: silent.server, hopTimeoutMs: 600_000, totalTimeoutMs: 300 }).lookup('example.com');
      assert.equal(result.registered, null);
      assert.equal(result.hops[0]?.status, 'timeout');
    } finally {
      await silent.close();
    }
  });

  test('a silent first server: a 200-style result saying so', async () => {
    const silent = await startWhoisServer({ replies: { '*': { silent: true } } });
    try {
      const result = await service({ server: silent.server, hopTimeoutMs: 200 }).lookup('example.com');
      assert.equal(result.registered, null);
      assert.equal(result.raw, '');
      assert.deepEqual(result.name_servers, []);
      assert.match(result.error ?? '', /no complete answer within 200 ms/);
    } finally {
      await silent.close();
    }
  });

  test('a server that hangs up without a byte', async () => {
    const rude = await startWhoisServer({ replies: { '*': { hangUp: true } } });
    try {
      const result = await service({ server: rude.server }).lookup('example.com');
      assert.equal(result.registered, null);
      assert.equal(result.error, 'no WHOIS server answered');
    } finally {
      await rude.close();
    }
  });

  test('IANA without a referral for the TLD', async () => {
    const lonely = await startWhoisServer({ replies: { '*': '% IANA WHOIS server\n% This query returned 0 objects.\n' } });
    try {
      const result = await service({ server: lonely.server }).lookup('example.invalidtld');
      assert.equal(result.registered, null);
      assert.equal(result.error, 'no WHOIS server found for example.invalidtld');
      assert.ok(result.raw.includes('returned 0 objects'));
    } finally {
      await lonely.close();
    }
  });
});

describe('input and policy', () => {
  test('invalid domains are a ValidationError before any connection', async () => {
    clearQueries();
    for (const bad of ['', 'com', 'exa mple.com', '_dmarc.example.com', '192.0.2.1', 'a..com']) {
      await assert.rejects(service().lookup(bad), ValidationError, bad);
    }
    assert.equal(iana.queries.length, 0);
  });

  test('a server in a blocked range is refused (403) before any packet', async () => {
    const strict = createDialer({ allowTargets: [], dnsServers: [dns.server] });
    clearQueries();
    await assert.rejects(new WhoisService({ dialer: strict, server: iana.server }).lookup('example.com'), TargetForbiddenError);
    assert.equal(iana.queries.length, 0);
  });
});

describe('cancellation', () => {
  // Hops that would wait far longer than the test may run: only the abort can end them.
  const patient = { hopTimeoutMs: 600_000, totalTimeoutMs: 600_000 };

  /** A server that accepts the query and never answers; `asked` settles when the query came. */
  async function silentServer(): Promise<{ server: WhoisFixture; asked: Promise<void> }> {
    const server = await startWhoisServer();
    const asked = new Promise<void>((resolve) =>
      server.reply('*', () => {
        resolve();
        return { silent: true };
      }),
    );
    return { server, asked };
  }

  test('an abort while a referred-to server is silent closes its socket at once and rejects with the reason', { timeout: 30_000 }, async (t) => {
    const { server: silent, asked } = await silentServer();
    t.after(() => silent.close());
    registry.reply('cancel.com', sample('com-verisign.txt', { 'EXAMPLE.COM': 'CANCEL.COM', 'whois.example-registrar.com': silent.address }));
    const abort = new AbortController();
    const lookup = service(patient).lookup('cancel.com', abort.signal);
    await asked;
    const closed = silent.allClosed();
    const reason = new Error('job cancelled');
    abort.abort(reason);
    await assert.rejects(lookup, (err) => err === reason);
    await closed;
    assert.deepEqual(silent.queries, ['cancel.com']);
  });

  test('an abort while the first server is silent: the same, and no referral is followed', { timeout: 30_000 }, async (t) => {
    const { server: silent, asked } = await silentServer();
    t.after(() => silent.close());
    clearQueries();
    const abort = new AbortController();
    const lookup = service({ ...patient, server: silent.server }).lookup('example.com', abort.signal);
    await asked;
    const closed = silent.allClosed();
    abort.abort(new Error('client gone'));
    await assert.rejects(lookup, /client gone/);
    await closed;
    assert.equal(registry.queries.length, 0);
  });

  test('a signal aborted before the lookup: no server is asked', async () => {
    clearQueries();
    const reason = new Error('already cancelled');
    await assert.rejects(service().lookup('example.com', AbortSignal.abort(reason)), (err) => err === reason);
    assert.equal(iana.queries.length, 0);
  });
});
