import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { StubResolver } from '../../../src/infra/dns/stub-resolver.js';
import { closedUdpPort, startDnsServer, type DnsFixture } from '../../fixtures/dns-server.js';

/**
 * docs/dns-whois.md: UNREACHABLE is a resolver that could not be reached at all (port
 * unreachable, no route); TIMEOUT is one that was reached and did not answer in time; a DNS-level
 * REFUSED stays REFUSED.
 */

let refusing: DnsFixture;
before(async () => {
  refusing = await startDnsServer({ behaviours: { '*': 'REFUSED' } });
});
after(() => refusing.close());

test('a resolver whose UDP port is closed is UNREACHABLE, with the reason, after every attempt', async () => {
  const port = await closedUdpPort();
  const c = new StubResolver({ servers: [{ host: '127.0.0.1', port }], timeoutMs: 5000, attempts: 2, cache: null });
  const answer = await c.query('example.test', 'A');
  assert.equal(answer.status, 'UNREACHABLE');
  assert.deepEqual(answer.records, []);
  assert.equal(answer.resolver, `127.0.0.1:${port}`);
  assert.match(answer.error ?? '', /ECONNREFUSED|unreachable/);
});

test('a resolver that answers REFUSED stays REFUSED', async () => {
  const c = new StubResolver({ servers: [refusing.server], timeoutMs: 5000, attempts: 2, cache: null });
  const answer = await c.query('example.test', 'A');
  assert.equal(answer.status, 'REFUSED');
  assert.equal(answer.error, null);
});

test('an unreachable first server fails over; a real answer from the next one wins', async () => {
  const port = await closedUdpPort();
  const c = new StubResolver({ servers: [{ host: '127.0.0.1', port }, refusing.server], timeoutMs: 5000, attempts: 2, cache: null });
  const answer = await c.query('example.test', 'A');
  assert.equal(answer.status, 'REFUSED', 'a response code beats an unreachable server');
  assert.equal(answer.resolver, `127.0.0.1:${refusing.port}`);
});
