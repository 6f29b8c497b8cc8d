import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { Static } from 'typebox';
import { WHOIS_MAX_RESPONSE_BYTES } from '../../src/domain/whois/defaults.js';
import { entries, parseWhois } from '../../src/domain/whois/parser.js';
import { findReferral } from '../../src/domain/whois/referral.js';
import type { WhoisResult } from '../../src/operations/dns-whois/schema.js';
import { startWhoisServer, type WhoisFixture } from '../fixtures/whois-server.js';
import { build, type Built } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { hostileWhoisAnswer as hostileAnswer, KIB, wireBytes } from './fixtures/hostile-whois-text.js';

/**
 * Issue 14: a WHOIS server anyone can run (every referral is followed) answers with 256 KiB of
 * text built to hurt the parser: runs of white space where the old regular expressions
 * backtracked, colon runs, key-like lines that never reach a colon, thousands of Status lines
 * with space runs before URLs, indentation blocks, "%" runs before "not found". The diagnosis must
 * be an ordinary 200 with the fields the answer really holds. (How long it takes is measured by
 * bench/hostile-peers.ts; a test only checks the result, which a stalled loop would not change.)
 */

type WhoisBody = Static<typeof WhoisResult>;

let server: WhoisFixture;
const FITS = hostileAnswer('fits.example', WHOIS_MAX_RESPONSE_BYTES);
const OVER = hostileAnswer('over.example', 4 * WHOIS_MAX_RESPONSE_BYTES);

before(async () => {
  server = await startWhoisServer({ replies: { 'fits.example': FITS, 'over.example': OVER } });
});
after(() => server.close());

async function app(t: TestContext): Promise<Built> {
  return build(t, { env: { NETDIAG_WHOIS_SERVER: server.address, NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
}

async function whois(built: Built, domain: string): Promise<WhoisBody> {
  const res = await built.api('/api/dns/whois', { json: { domain } });
  const body = (await res.json()) as { success: boolean; data: WhoisBody };
  await assertMatchesOpenApi(built.app as FastifyInstance, 'POST', '/api/dns/whois', res.status, body);
  assert.equal(res.status, 200, JSON.stringify(body).slice(0, 500));
  assert.equal(body.success, true);
  return body.data;
}

const EXPECTED = {
  registered: true,
  registrar: 'Hostile Registrar Ltd',
  creation_date: '2001-02-03T04:05:06Z',
  expiration_date: '2031-02-03T04:05:06Z',
  name_servers: ['ns1.hostile-example.net', 'ns2.hostile-example.net'],
  dnssec: false,
};

test('the hostile answer is as large as the cap lets in', () => {
  assert.ok(wireBytes(FITS) > WHOIS_MAX_RESPONSE_BYTES - 64 * KIB && wireBytes(FITS) <= WHOIS_MAX_RESPONSE_BYTES, String(wireBytes(FITS)));
  assert.ok(wireBytes(OVER) > WHOIS_MAX_RESPONSE_BYTES);
});

test('256 KiB of pathological WHOIS text: a 200 with the fields it really holds', async (t) => {
  const built = await app(t);
  const data = await whois(built, 'fits.example');
  assert.equal(data.domain, 'fits.example');
  assert.deepEqual(
    {
      registered: data.registered,
      registrar: data.registrar,
      creation_date: data.creation_date,
      expiration_date: data.expiration_date,
      name_servers: data.name_servers,
      dnssec: data.dnssec,
    },
    EXPECTED,
  );
  // The URLs after the space runs are gone; the Status lines that were only a URL add nothing.
  assert.deepEqual(data.status.slice(0, 2), ['clientTransferProhibited', 'ok']);
  // Garbage in a date field is no date; a referral that is junk is not followed.
  assert.equal(data.updated_date, null);
  assert.deepEqual(
    data.hops.map((h) => [h.server, h.status]),
    [[server.address, 'ok']],
  );
  assert.equal(data.hops[0]!.bytes, wireBytes(FITS));
  assert.equal(data.error, null);
});

test('past the cap: the answer is cut, the cut reported, the fields before it still read', async (t) => {
  const built = await app(t);
  const data = await whois(built, 'over.example');
  assert.equal(data.registrar, EXPECTED.registrar);
  assert.deepEqual(data.name_servers, EXPECTED.name_servers);
  assert.equal(data.hops[0]!.status, 'truncated');
  assert.equal(data.hops[0]!.bytes, WHOIS_MAX_RESPONSE_BYTES);
  assert.match(data.error ?? '', /larger than 262144 bytes, cut off/);
});

test('the parser on the same text directly: entries are bounded by the line cap', () => {
  const text = FITS.replace(/\n/g, '\r\n');
  const es = entries(text);
  // Block entries join the block's key and the line's: two keys and a space at most.
  assert.ok(es.every((e) => e.key.length <= 2 * 80 + 1 && e.value.length <= 1024));
  const fields = parseWhois(text, es);
  assert.equal(fields.domain, 'fits.example');
  assert.equal(fields.registrar, EXPECTED.registrar);
  assert.equal(findReferral(es), null, 'a run of "a://" is no WHOIS server to follow');
  assert.equal(fields.registrar_url, null, 'the Registrar URL line is cut before any value');
});
