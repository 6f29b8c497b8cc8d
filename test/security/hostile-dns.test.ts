import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import dnsPacket, { type DecodedPacket } from 'dns-packet';
import type { FastifyInstance } from 'fastify';
import { decodeBounded, nameSteps, recordsCut } from '../../src/infra/dns/decode.js';
import { DNS_MAX_NAME_STEPS, DNS_MAX_RECORDS, DNS_MAX_TCP_MESSAGE_BYTES } from '../../src/infra/dns/defaults.js';
import { StubResolver } from '../../src/infra/dns/stub-resolver.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { answerHead, fullOfTxt, longNameManyTimes, manyRecords, MAX_UDP_PAYLOAD, pointer, pointerChain, startRawDnsServer, type RawDnsFixture } from './fixtures/raw-dns-server.js';
import { NameBudgetError } from '../../src/errors.js';

/**
 * Issue 14: a DNS server is a peer too (NETDIAG_DNS_SERVERS may point anywhere, and a resolver
 * relays what authoritative servers say). These answers are as large as DNS allows, or built so
 * that expanding their compressed names costs far more than reading their bytes. The honest ones
 * must come back whole; the ones whose names would take more than DNS_MAX_NAME_STEPS to
 * decompress are refused, which the API reports as TIMEOUT (no server gave a usable answer).
 */

type Builder = (query: DecodedPacket) => Buffer;

/** Over UDP: the TC bit and nothing else, so the client asks again over TCP and gets `tcp`. */
const overTcp =
  (tcp: Builder) =>
  (query: DecodedPacket, transport: 'udp' | 'tcp'): Buffer =>
    transport === 'udp' ? answerHead(query, { tc: true }) : tcp(query);

const CASES: Record<string, (query: DecodedPacket, transport: 'udp' | 'tcp') => Buffer> = {
  'txt-tcp.example': overTcp((q) => fullOfTxt(answerHead(q), DNS_MAX_TCP_MESSAGE_BYTES).bytes),
  'txt-udp.example': (q) => fullOfTxt(answerHead(q), MAX_UDP_PAYLOAD).bytes,
  'many.example': overTcp((q) => manyRecords(answerHead(q), DNS_MAX_TCP_MESSAGE_BYTES).bytes),
  'chain.example': overTcp((q) => pointerChain(answerHead(q), 8_000, DNS_MAX_TCP_MESSAGE_BYTES)),
  'long-names.example': overTcp((q) => longNameManyTimes(answerHead(q), DNS_MAX_TCP_MESSAGE_BYTES)),
};

let dns: RawDnsFixture;
before(async () => {
  dns = await startRawDnsServer((query, transport) => {
    const name = query.questions?.[0]?.name.toLowerCase() ?? '';
    // By the name's end, so that "r2.many.example" gets the "many.example" answer.
    const respond = Object.entries(CASES).find(([suffix]) => name === suffix || name.endsWith(`.${suffix}`))?.[1];
    return respond ? respond(query, transport) : answerHead(query);
  });
});
after(() => dns.close());

interface LookupBody {
  domain: string;
  type: string;
  status: string;
  records: Array<{ type: string; value: string; ttl: number }>;
}

async function lookup(t: TestContext, domain: string): Promise<LookupBody> {
  const built: Built = await build(t, { env: { NETDIAG_DNS_SERVERS: dns.address } });
  const res = await built.api('/api/dns/lookup', { json: { domain, type: 'TXT' } });
  const body = (await res.json()) as { success: boolean; data: LookupBody };
  await assertMatchesOpenApi(built.app as FastifyInstance, 'POST', '/api/dns/lookup', res.status, body);
  assert.equal(res.status, 200, JSON.stringify(body).slice(0, 300));
  return body.data;
}

/** What the fixture sends for a case (a query with the id 0). */
function sent(domain: string, transport: 'udp' | 'tcp'): Buffer {
  const query = dnsPacket.decode(dnsPacket.encode({ type: 'query', id: 0, questions: [{ type: 'TXT', name: domain, class: 'IN' }] }));
  return CASES[domain]!(query, transport);
}

describe('honest answers as large as DNS allows come back whole', () => {
  test('a 64 KiB TCP answer full of TXT character-strings', async (t) => {
    const { values } = fullOfTxt(answerHead(dnsPacket.decode(sent('txt-tcp.example', 'udp'))), DNS_MAX_TCP_MESSAGE_BYTES);
    assert.equal(sent('txt-tcp.example', 'tcp').length, DNS_MAX_TCP_MESSAGE_BYTES);
    const data = await lookup(t, 'txt-tcp.example');
    assert.equal(data.status, 'NOERROR');
    assert.deepEqual(
      data.records.map((r) => r.value),
      values,
    );
  });

  test('a 65,507-byte UDP datagram (past the advertised 1,232) full of TXT', async (t) => {
    const { values } = fullOfTxt(answerHead(dnsPacket.decode(sent('txt-udp.example', 'udp'))), MAX_UDP_PAYLOAD);
    assert.equal(sent('txt-udp.example', 'udp').length, MAX_UDP_PAYLOAD);
    const data = await lookup(t, 'txt-udp.example');
    assert.equal(data.status, 'NOERROR');
    assert.ok(data.records.every((r) => r.type === 'TXT' && r.ttl === 60));
    assert.deepEqual(
      data.records.map((r) => r.value),
      values,
    );
  });

  test('4,000+ records, each named by a compression pointer: the first DNS_MAX_RECORDS are read', async (t) => {
    const { values } = manyRecords(answerHead(dnsPacket.decode(sent('many.example', 'udp'))), DNS_MAX_TCP_MESSAGE_BYTES);
    assert.ok(values.length > 4_000);
    const packet = decodeBounded(sent('many.example', 'tcp'));
    assert.equal(packet.answers!.length, DNS_MAX_RECORDS);
    assert.equal(recordsCut(packet), values.length - DNS_MAX_RECORDS);
    const data = await lookup(t, 'many.example');
    assert.equal(data.status, 'NOERROR');
    assert.deepEqual(
      data.records.map((r) => r.value),
      values.slice(0, DNS_MAX_RECORDS),
    );
  });

  test('the resolver says when records were left unread', async () => {
    const answer = await new StubResolver({ servers: [dns.server], cache: null }).query('r2.many.example', 'TXT');
    assert.equal(answer.records.length, DNS_MAX_RECORDS);
    assert.match(answer.error ?? '', /records more than the 1000 read/);
    const whole = await new StubResolver({ servers: [dns.server], cache: null }).query('r2.txt-tcp.example', 'TXT');
    assert.equal(whole.error, null);
  });
});

describe('answers whose names cost more than the budget to decompress are refused', () => {
  test('a pointer chain walked again by thousands of records: TIMEOUT, no records', async (t) => {
    assert.throws(() => decodeBounded(sent('chain.example', 'tcp')), NameBudgetError);
    const data = await lookup(t, 'chain.example');
    assert.deepEqual([data.status, data.records], ['TIMEOUT', []]);
  });

  test('a 127-label name named by pointer thousands of times (legal, but 250x amplification): TIMEOUT', async (t) => {
    assert.throws(() => decodeBounded(sent('long-names.example', 'tcp')), NameBudgetError);
    const data = await lookup(t, 'long-names.example');
    assert.deepEqual([data.status, data.records], ['TIMEOUT', []]);
  });
});

describe('decodeBounded', () => {
  test('decodes exactly as dns-packet does, every record type with names included', () => {
    const packet = dnsPacket.encode({
      type: 'response',
      id: 7,
      flags: dnsPacket.RECURSION_AVAILABLE,
      questions: [{ type: 'TXT', name: 'example.com', class: 'IN' }],
      answers: [
        { type: 'A', name: 'example.com', ttl: 1, data: '192.0.2.1' },
        { type: 'AAAA', name: 'www.example.com', ttl: 2, data: '2001:db8::1' },
        { type: 'CNAME', name: 'alias.example.com', ttl: 3, data: 'www.example.com' },
        { type: 'NS', name: 'example.com', ttl: 4, data: 'ns1.example.com' },
        { type: 'PTR', name: '1.2.0.192.in-addr.arpa', ttl: 5, data: 'example.com' },
        { type: 'MX', name: 'example.com', ttl: 6, data: { preference: 10, exchange: 'mx.example.com' } },
        { type: 'SRV', name: '_sip._tcp.example.com', ttl: 7, data: { priority: 1, weight: 2, port: 5060, target: 'sip.example.com' } },
        { type: 'TXT', name: 'example.com', ttl: 8, data: ['v=spf1 -all', 'more'] },
        { type: 'CAA', name: 'example.com', ttl: 9, data: { flags: 0, tag: 'issue', value: 'ca.example' } },
      ],
      authorities: [
        { type: 'SOA', name: 'example.com', ttl: 10, data: { mname: 'ns1.example.com', rname: 'host.master.example.com', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 } },
      ],
    });
    assert.deepEqual(decodeBounded(packet), dnsPacket.decode(packet));
    // The budget is per message: the same message decodes again and again.
    assert.deepEqual(decodeBounded(packet), dnsPacket.decode(packet));
  });

  test('malformed messages still throw dns-packet\'s own errors, and the codec is put back', () => {
    assert.throws(() => decodeBounded(Buffer.from([0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c])), /bad pointer/);
    const ok = dnsPacket.encode({ type: 'query', id: 1, questions: [{ type: 'A', name: 'example.com', class: 'IN' }] });
    assert.equal(dnsPacket.decode(ok).questions![0]!.name, 'example.com');
  });

  test('nameSteps counts one step per label, pointer and end, and stops at the limit', () => {
    const buf = Buffer.concat([Buffer.alloc(12), Buffer.from('\x07example\x03com\x00', 'latin1'), pointer(12), pointer(25)]);
    assert.equal(nameSteps(buf, 12, DNS_MAX_NAME_STEPS), 3);
    assert.equal(nameSteps(buf, 25, DNS_MAX_NAME_STEPS), 4);
    assert.equal(nameSteps(buf, 27, DNS_MAX_NAME_STEPS), 5);
    assert.equal(nameSteps(buf, 27, 2), 3, 'limit + 1 means over the limit');
  });
});
